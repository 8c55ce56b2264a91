import ObserverGraph
import Testing

/// An error of the app's own, to check that each API throws what its body throws with its type.
enum QuotaError: Error, Equatable {
    case overQuota(requested: Int, left: Int)
}

/// The bodies of `withLock`, `broadcast`, `update` and `batch` throw their own error type: a
/// caller that annotates the body catches that type, not `any Error`. Each catch below binds the
/// error to its declared type, so a regression to `rethrows` fails to compile; a body that does
/// not throw needs no `try`. What a throwing body did is undone, and nothing is delivered.
@Suite("Typed throws: each body's error comes back with its type; a throw changes nothing")
struct TypedThrowsTests {
    @Test(
        "GraphLock.withLock: the body's QuotaError, typed; the lock is free afterwards, with what the body changed"
    )
    func lockTyped() {
        let credits = GraphLock(3)
        do {
            try credits.withLock { (credits) throws(QuotaError) in
                guard credits >= 5 else { throw .overQuota(requested: 5, left: credits) }
                credits -= 5
            }
            Issue.record("the body threw; withLock must throw")
        } catch {
            let typed: QuotaError = error
            #expect(typed == .overQuota(requested: 5, left: 3))
        }
        // What the body changed before throwing stays: the state is the body's to keep whole.
        #expect(throws: QuotaError.overQuota(requested: 9, left: 2)) {
            try credits.withLock { (credits) throws(QuotaError) in
                credits -= 1
                throw .overQuota(requested: 9, left: credits)
            }
        }
        let doubled = credits.withLock { credits in  // no `try`: the body does not throw
            credits *= 2
            return credits
        }
        #expect(doubled == 4)
    }

    @Test("broadcast: stops at the body's QuotaError, typed, after the observers before it")
    func broadcastTyped() {
        let subject = Subject("wallet")
        let watchers = (0..<3).map { Watcher("w\($0)") }
        for watcher in watchers { subject.addObserver(watcher) }
        var called: [String] = []
        do {
            try subject.broadcast(as: Watcher.self) { (watcher) throws(QuotaError) in
                called.append(watcher.name)
                if watcher.name == "w1" { throw .overQuota(requested: 1, left: 0) }
            }
            Issue.record("the body threw; broadcast must throw")
        } catch {
            let typed: QuotaError = error
            #expect(typed == .overQuota(requested: 1, left: 0))
        }
        #expect(called == ["w0", "w1"])
        let count = subject.broadcast(as: Watcher.self) { _ in }  // no `try`
        #expect(count == 3)
        withExtendedLifetime(watchers) {}  // the subject holds them weakly
    }

    @Test("ObservableValue.update and ObservableState.update: QuotaError, typed; no change, no delivery")
    func updateTyped() {
        let credits = ObservableValue(3)
        let seen = GraphLock<[Int]>([])
        let token = credits.observeValuesNonisolated { value in seen.withLock { $0.append(value) } }
        func spend(_ price: Int) throws(QuotaError) {
            try credits.update { (credits) throws(QuotaError) in
                guard credits >= price else { throw .overQuota(requested: price, left: credits) }
                credits -= price
            }
        }
        #expect(throws: QuotaError.overQuota(requested: 5, left: 3)) { try spend(5) }
        #expect(credits.value == 3)
        #expect(seen.withLock { $0 } == [3])
        do {
            try spend(2)
            try spend(2)
            Issue.record("the second spend must throw")
        } catch {
            let typed: QuotaError = error
            #expect(typed == .overQuota(requested: 2, left: 1))
        }
        #expect(credits.value == 1)
        #expect(seen.withLock { $0 } == [3, 1])

        let state = ObservableState("idle")
        do {
            try state.update { (value) throws(QuotaError) in
                value = "half-written"
                throw .overQuota(requested: 1, left: 0)
            }
        } catch {
            let typed: QuotaError = error
            #expect(typed == .overQuota(requested: 1, left: 0))
        }
        #expect(state.value == "idle")
        let length = state.update { value in  // no `try`
            value = "busy"
            return value.count
        }
        #expect(length == 4 && state.value == "busy")
        withExtendedLifetime(token) {}
    }

    @Test("ObservableArray.batch: the array's own errors and the app's, typed; a throw changes nothing")
    func arrayBatchTyped() {
        let names = ObservableArray(["Ann", "Bob"])
        let log = ChangeLog<String>()
        let token = names.observeValuesNonisolated(log.record)
        do {
            try names.batch { (batch) throws(ObservableArrayError) in
                batch.append("Tony")
                try batch.remove(at: 5)
            }
            Issue.record("remove(at: 5) must throw")
        } catch {
            let typed: ObservableArrayError = error
            #expect(typed == .indexOutOfRange(index: 5, count: 3))
        }
        do {
            try names.batch { (batch) throws(QuotaError) in
                batch.append("Tony")
                if batch.elements.count > 2 { throw .overQuota(requested: 3, left: 2) }
            }
        } catch {
            let typed: QuotaError = error
            #expect(typed == .overQuota(requested: 3, left: 2))
        }
        #expect(names.array == ["Ann", "Bob"])
        let count = names.batch { batch in  // no `try`
            batch.append("Tony")
            return batch.elements.count
        }
        #expect(count == 3 && names.array == ["Ann", "Bob", "Tony"])
        #expect(log.changesets == [ArrayChangeset(inserts: [0, 1]), ArrayChangeset(inserts: [2])])
        withExtendedLifetime(token) {}
    }

    @Test("ObservableSectionedArray.batch: ObservableArrayError, typed; a throw changes nothing")
    func sectionedBatchTyped() {
        let table = ObservableSectionedArray([ArraySection(metadata: "A", items: [1, 2])])
        let log = GraphLock<[SectionedChangeset]>([])
        let token = table.observeValuesNonisolated { change in log.withLock { $0.append(change.changeset) } }
        do {
            try table.batch { (batch) throws(ObservableArrayError) in
                try batch.appendItem(3, toSection: 0)
                try batch.appendItem(4, toSection: 1)
            }
            Issue.record("appendItem(toSection: 1) must throw")
        } catch {
            let typed: ObservableArrayError = error
            #expect(typed == .indexOutOfRange(index: 1, count: 1))
        }
        #expect(table.sections.map(\.items) == [[1, 2]])
        table.batch { batch in batch.appendSection(ArraySection(metadata: "B", items: [])) }  // no `try`
        #expect(table.sections.map(\.metadata) == ["A", "B"])
        #expect(log.withLock { $0.count } == 2)  // the replay, then the appended section only
        #expect(log.withLock { $0.last } == SectionedChangeset(sections: ArrayChangeset(inserts: [1])))
        withExtendedLifetime(token) {}
    }
}
