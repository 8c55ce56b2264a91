import ObserverGraph
import Testing

// A values() sequence is read by one loop. A second loop over it used to wait for good once the
// first had ended early (the observation was gone, the stream never finished), or crash when it
// ran beside the first. A loop whose observer was taken out of the source's list
// (removeObserver, removeAllObservers) used to wait for good too, even after the source ended.

/// The values a loop collects, once it has ended; `nil` (and the loop cancelled) if it is still
/// waiting at the deadline: a loop that never ends fails the test instead of hanging it.
private func ended<Element: Sendable>(
    _ loop: Task<[Element], any Error>, finished: GraphLock<Bool>
) async throws -> [Element]? {
    guard await eventually({ finished.withLock { $0 } }) else {
        loop.cancel()
        return nil
    }
    return try await loop.value
}

/// Starts a loop over `values`, collecting every value; `finished` is set when it ends.
private func collect<S: AsyncSequence & Sendable>(
    _ values: S, finished: GraphLock<Bool>, seen: GraphLock<[S.Element]>? = nil
) -> Task<[S.Element], any Error> where S.Element: Sendable {
    Task {
        defer { finished.withLock { $0 = true } }
        var all: [S.Element] = []
        for try await value in values {
            all.append(value)
            seen?.withLock { $0.append(value) }
        }
        return all
    }
}

@Suite("values(): one loop reads; a removed observer ends the loop", .timeLimit(.minutes(3)))
struct ValuesSecondLoopTests {
    @Test("A second loop, after the first broke out, ends at once with nothing")
    func secondLoopAfterBreak() async throws {
        let credits = ObservableValue(0)
        let updates = credits.values()
        credits.set(1)
        credits.set(2)  // buffered, never read
        var first: [Int] = []
        for try await value in updates {
            first.append(value)
            if value == 1 { break }
        }
        #expect(first == [0, 1])
        let finished = GraphLock(false)
        #expect(try await ended(collect(updates, finished: finished), finished: finished) == [])
        #expect(credits.observerCount == 0)
        withExtendedLifetime(updates) {}
    }

    @Test("A second loop beside a running first one ends at once; the first reads on")
    func secondLoopBesideTheFirst() async throws {
        let channel = EventChannel<String>()
        let messages = channel.values()
        let (firstDone, seen) = (GraphLock(false), GraphLock<[String]>([]))
        let first = collect(messages, finished: firstDone, seen: seen)
        channel.send("a")
        #expect(await eventually { seen.withLock { $0 } == ["a"] })  // the first loop reads
        let secondDone = GraphLock(false)
        #expect(try await ended(collect(messages, finished: secondDone), finished: secondDone) == [])
        channel.send("b")
        channel.finish()
        #expect(try await ended(first, finished: firstDone) == ["a", "b"])
        #expect(channel.observerCount == 0)
    }

    @Test("removeAllObservers ends a loop over an ObservableValue's values(): what came, then the end")
    func removeAllEndsTheLoop() async throws {
        let credits = ObservableValue(0)
        let (finished, seen) = (GraphLock(false), GraphLock<[Int]>([]))
        let loop = collect(credits.values(), finished: finished, seen: seen)
        #expect(await eventually { credits.observerCount == 1 })
        credits.set(1)
        #expect(await eventually { seen.withLock { $0 } == [0, 1] })
        #expect(credits.removeAllObservers().count == 1)
        credits.set(2)  // after the removal: not in the loop
        #expect(try await ended(loop, finished: finished) == [0, 1])
        #expect(credits.observerCount == 0)
    }

    @Test("removeObserver of a loop's observer ends that loop; the other observer goes on")
    func removeOneEndsItsLoop() async throws {
        let channel = EventChannel<Int>()
        let log = EventLog()
        let (finished, seen) = (GraphLock(false), GraphLock<[Int]>([]))
        let loop = collect(channel.values(), finished: finished, seen: seen)
        let other = channel.observeValuesNonisolated { log.append("other \($0)") }
        channel.send(1)
        #expect(await eventually { seen.withLock { $0 } == [1] })
        let loopObserver = channel.observers[0]  // the loop's joined first
        #expect(channel.removeObserver(loopObserver) != nil)
        channel.send(2)
        #expect(try await ended(loop, finished: finished) == [1])
        #expect(log.all == ["other 1", "other 2"])
        #expect(channel.observerCount == 1)
        withExtendedLifetime(other) {}
    }

    @Test("A removed loop over an ObservableState and over a derived value ends too")
    func removalEndsStateAndDerivedLoops() async throws {
        let state = ObservableState("a")
        let (stateDone, stateSeen) = (GraphLock(false), GraphLock<[String]>([]))
        let stateLoop = collect(state.values(), finished: stateDone, seen: stateSeen)
        #expect(await eventually { stateSeen.withLock { $0 } == ["a"] })
        #expect(state.removeAllObservers().count == 1)
        state.value = "b"
        #expect(try await ended(stateLoop, finished: stateDone) == ["a"])

        let source = ObservableValue(1)
        let doubled = source.map { $0 * 2 }
        let (derivedDone, derivedSeen) = (GraphLock(false), GraphLock<[Int]>([]))
        let derivedLoop = collect(doubled.values(), finished: derivedDone, seen: derivedSeen)
        #expect(await eventually { derivedSeen.withLock { $0 } == [2] })
        #expect(doubled.removeAllObservers().count == 1)
        source.value = 2
        #expect(try await ended(derivedLoop, finished: derivedDone) == [2])
        #expect(doubled.observerCount == 0)
    }

    @Test("A second loop over an ObservableState's values() ends at once with nothing")
    func stateSecondLoop() async throws {
        let state = ObservableState(0)
        let values = state.values()
        for await value in values where value == 0 { break }
        let finished = GraphLock(false)
        #expect(try await ended(collect(values, finished: finished), finished: finished) == [])
        #expect(state.observerCount == 0)
        withExtendedLifetime(values) {}
    }
}
