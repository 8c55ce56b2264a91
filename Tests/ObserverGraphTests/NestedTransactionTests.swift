import Dispatch
import ObserverGraph
import Testing

// A change made from inside a transaction body of the same source, on the same thread, used to
// livelock: the inner commit made the outer attempt stale, the outer ran its body again, which
// committed the inner change again. Each change must now be applied exactly once, and delivered.

@Suite("Nested transactions on one source", .timeLimit(.minutes(3)))
struct NestedTransactionTests {
    @Test("update inside update: both changes applied once, the inner first; observers see each once")
    func updateInsideUpdate() {
        let value = ObservableValue(0)
        let seen = GraphLock<[Int]>([])
        let token = value.observeValuesNonisolated { v in seen.withLock { $0.append(v) } }
        let outerRuns = GraphLock(0)
        let innerRuns = GraphLock(0)
        let result = value.update { v -> String in
            outerRuns.withLock { $0 += 1 }
            v += 1
            value.update { inner in
                innerRuns.withLock { $0 += 1 }
                inner += 10
            }
            return "outer"
        }
        #expect(result == "outer")
        #expect(value.value == 11)
        #expect(seen.withLock { $0 } == [0, 10, 11])
        #expect(innerRuns.withLock { $0 } == 1)
        #expect(outerRuns.withLock { $0 } == 2)  // the first run found itself stale once
        withExtendedLifetime(token) {}
    }

    @Test("A plain set inside update is applied once; the outer body reruns on it; each value seen once")
    func setInsideUpdate() {
        let value = ObservableValue(1)
        let seen = GraphLock<[Int]>([])
        let token = value.observeValuesNonisolated { v in seen.withLock { $0.append(v) } }
        var outerRuns = 0
        value.update { v in
            outerRuns += 1
            value.value = 100  // nested: applied at once, not again on the rerun
            v += 1
        }
        #expect(value.value == 101)
        #expect(outerRuns == 2)
        #expect(seen.withLock { $0 } == [1, 100, 101])
        // A set made on another value inside the update is an ordinary set.
        let other = ObservableValue(0)
        value.update { v in
            other.set(v)
            v += 1
        }
        #expect(other.value == 101)
        #expect(value.value == 102)
        // A set after termination is dropped, also when nested.
        value.finish()
        value.value = 7
        value.update { _ in value.set(8) }
        #expect(value.value == 102)
        #expect(seen.withLock { $0 } == [1, 100, 101, 102])
        withExtendedLifetime(token) {}
    }

    @Test("A nested update returns the result of its one run, also on the outer body's rerun")
    func nestedResultReplayed() {
        let value = ObservableValue(5)
        var innerResults: [Int] = []
        value.update { v in
            let before = value.update { inner -> Int in
                defer { inner *= 2 }
                return inner
            }
            innerResults.append(before)
            v += 1
        }
        #expect(value.value == 11)
        #expect(innerResults == [5, 5])
    }

    /// The documented rule: a rerun's nested changes are matched to the first run's by order and
    /// result type. A different nested change in the place of the first run's, with the same
    /// result type, is taken for it: it returns the first result and is not applied.
    @Test("A rerun's nested change is matched by order and result type, not by what it does")
    func nestedMatchedByOrder() {
        let value = ObservableValue(0)
        var runs = 0
        var results: [String] = []
        value.update { v in
            runs += 1
            if runs == 1 {
                results.append(
                    value.update { inner in
                        inner += 1
                        return "first"
                    })
            } else {
                results.append(
                    value.update { inner in
                        inner += 100
                        return "second"
                    })
            }
            v += 10
        }
        #expect(runs == 2)
        #expect(results == ["first", "first"])
        #expect(value.value == 11)
    }

    @Test("batch inside batch, and append inside batch: every element once, inner ones first")
    func batchInsideBatch() throws {
        let array = ObservableArray<Int>()
        let changes = GraphLock<[ArrayChangeset]>([])
        let token = array.observeValuesNonisolated { change in
            changes.withLock { $0.append(change.changeset) }
        }
        array.batch { outer in
            outer.append(1)
            array.batch { inner in inner.append(20) }
            array.append(30)
        }
        #expect(array.array == [20, 30, 1])
        #expect(
            changes.withLock { $0 } == [
                ArrayChangeset(), ArrayChangeset(inserts: [0]), ArrayChangeset(inserts: [1]),
                ArrayChangeset(inserts: [2]),
            ])
        withExtendedLifetime(token) {}
    }

    @Test("No observer runs while the outer transaction is open; one that writes back is not replayed")
    func observerWritesBackDuringNestedCommit() {
        let value = ObservableValue(0)
        let seen = GraphLock<[Int]>([])
        let token = value.observeValuesNonisolated { v in
            seen.withLock { $0.append(v) }
            if v == 10 { value.update { $0 += 100 } }  // a top-level change of its own
        }
        value.update { v in
            v += 1
            value.update { $0 += 10 }
            value.update { $0 += 1_000 }
        }
        #expect(value.value == 1_111)
        let history = seen.withLock { $0 }
        #expect(history.first == 0 && history.last == 1_111)
        #expect(history.count == 5)  // 0, 10, 1010, 1011, then the observer's +100
        withExtendedLifetime(token) {}
    }

    @Test("An outer body that throws after a nested change: the nested change stays and is delivered")
    func outerThrowsAfterNestedChange() {
        struct Declined: Error {}
        let value = ObservableValue(0)
        let seen = GraphLock<[Int]>([])
        let token = value.observeValuesNonisolated { v in seen.withLock { $0.append(v) } }
        #expect(throws: Declined.self) {
            try value.update { _ in
                value.update { $0 += 7 }
                throw Declined()
            }
        }
        #expect(value.value == 7)
        #expect(seen.withLock { $0 } == [0, 7])
        value.update { $0 += 1 }  // the source is not stuck
        #expect(seen.withLock { $0 } == [0, 7, 8])
        withExtendedLifetime(token) {}
    }
}

/// Whether `read`, run on a new thread, returned within `seconds`.
private func returnsFromAnotherThread(within seconds: Double, _ read: @escaping @Sendable () -> Void) -> Bool
{
    let done = DispatchSemaphore(value: 0)
    onNewThread {
        read()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

/// A nested update's result is kept for the outer body's reruns; however the outer change ends,
/// it is released with no lock held. Each result here reads the value from another thread when
/// it goes: the read returns at once, not after the 10 s the `deinit` waits while a lock is held.
@Suite("Nested transactions: results released with no lock held", .timeLimit(.minutes(3)))
struct NestedResultReleaseTests {
    private func result(_ value: ObservableValue<Int>, _ reads: GraphLock<[Bool]>) -> DeinitHook {
        DeinitHook {
            let returned = returnsFromAnotherThread(within: 10) { _ = value.value }
            reads.withLock { $0.append(returned) }
        }
    }

    @Test("The outer body throws after a nested update")
    func outerThrows() {
        struct Declined: Error {}
        let value = ObservableValue(0)
        let reads = GraphLock<[Bool]>([])
        #expect(throws: Declined.self) {
            try value.update { (_: inout Int) throws(Declined) in
                _ = value.update { inner in
                    inner += 1
                    return result(value, reads)
                }
                throw Declined()
            }
        }
        #expect(reads.withLock { $0 } == [true])
        #expect(value.value == 1)
    }

    @Test("The source finishes inside the outer body, after a nested update")
    func finishedInsideOuter() {
        let value = ObservableValue(0)
        let reads = GraphLock<[Bool]>([])
        value.update { outer in
            _ = value.update { inner in
                inner += 1
                return result(value, reads)
            }
            value.finish()
            outer += 100
        }
        #expect(reads.withLock { $0 } == [true])
        #expect(value.value == 1)
    }

    @Test("A rerun of the outer body makes another nested change than the first run")
    func rerunDiverges() {
        let value = ObservableValue(0)
        let reads = GraphLock<[Bool]>([])
        value.update { current in
            if current == 0 {
                _ = value.update { inner in
                    inner = 1
                    return result(value, reads)
                }
            } else {
                value.set(current + 10)  // the update's record is dropped at this set's replay
            }
        }
        #expect(reads.withLock { $0 } == [true])
        #expect(value.value == 11)
    }
}
