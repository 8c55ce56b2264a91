import Foundation
import ObserverGraph
import Testing

@Suite("Operators: a source's input, from its first operator to its last")
struct OperatorInputLifetimeTests {
    @Test("The input leaves its source with the last operator on it; the next operator gets a new one")
    func inputLeavesWithLastOperator() {
        let x = ObservableValue(1)
        do {
            let first = x.map { $0 * 10 }
            let second = x.map { $0 + 1 }
            // Each derived value observes its input, and both share one input.
            #expect(x.observerCount == 3)
            x.value = 2
            #expect(first.value == 20 && second.value == 3)
        }
        #expect(x.observerCount == 0)

        let log = EventLog()
        let third = x.map { $0 * 100 }
        #expect(third.value == 200)
        let token = third.observeValuesNonisolated { log.append("\($0)") }
        x.value = 3
        #expect(log.all == ["200", "300"])
        #expect(x.observerCount == 2)
        token.cancel()
        withExtendedLifetime(third) {}
    }

    @Test("A join released before its inputs were connected leaves no input on them")
    func joinReleasedBeforeConnecting() {
        let x = ObservableValue(0)
        let y = ObservableValue(0)
        let built = Counters()
        // Built inside a pass of x's graph, the join connects after that pass; it is released
        // before then, so its edges are never made.
        let watcher = x.map { value -> Int in
            if value == 1 {
                let join = x.combineLatest(y)
                built.bump(join.value == nil ? "pending" : "connected")
            }
            return value
        }
        x.value = 1
        #expect(built["pending"] == 1)
        #expect(y.observerCount == 0)
        #expect(x.observerCount == 2)  // `watcher` and the input it shares
        y.value = 5
        let fresh = y.map { $0 }
        #expect(fresh.value == 5)
        withExtendedLifetime(watcher) {}
    }

    @Test("Operators made and dropped on two threads while a third changes the source: each one follows it")
    func operatorsMadeWhileInputsRetire() {
        let x = ObservableValue(0)
        let finished = GraphLock(0)
        let stale = Counters()
        race(threads: 3) { thread in
            if thread == 0 {
                // Paced: what this test is about is the input's lifetime; builds under sets made
                // without pause are OperatorBuildHandOffTests' subject.
                // Bounded, so that a builder that never returns fails the test instead of hanging.
                let deadline = Date().addingTimeInterval(60)
                var next = 1
                while finished.withLock({ $0 }) < 2 {
                    guard Date() < deadline else {
                        stale.bump("setter gave up")
                        return
                    }
                    x.value = next
                    next += 1
                    usleep(5)
                }
                return
            }
            defer { finished.withLock { $0 += 1 } }
            for _ in 0..<4_000 {
                // Made while the other thread's last operator may be retiring the input: it
                // must still be fed by the source.
                let derived = x.map { $0 }
                let start = x.value
                let deadline = Date().addingTimeInterval(10)
                while (derived.value ?? -1) <= start {
                    guard Date() < deadline else {
                        stale.bump("stale")
                        return
                    }
                    usleep(20)
                }
            }
        }
        #expect(stale["stale"] == 0)
        #expect(stale["setter gave up"] == 0)
        #expect(x.observerCount == 0)
        let end = x.map { $0 }
        #expect(end.value == x.value)
    }

    /// The input keeps the source's latest value (a new operator starts from it), and the sink
    /// that feeds it holds the input through its closure: both must go with the source, or the
    /// last value set would live for good (found by a mutant that never released that closure).
    @Test("The source's last value goes with the source and its operators, and with a coalesced observation")
    func lastValueGoesWithTheSource() async {
        let deinits = Counters()
        var value: ObservableValue<Payload>? = ObservableValue(Payload(deinits: deinits))
        var derived: DerivedValue<Int>? = value!.map { _ in 1 }
        #expect(derived?.value == 1)
        derived = nil
        value = nil
        #expect(deinits["payload"] == 1)

        // The same through a coalesced observation's feed, cancelled, then the source dropped.
        var coalesced: ObservableValue<Payload>? = ObservableValue(Payload(deinits: deinits))
        let token = await MainActor.run { [coalesced] in coalesced!.observeValuesCoalesced { _ in } }
        token.cancel()
        coalesced = nil
        #expect(await eventually(within: .seconds(60)) { deinits["payload"] == 2 })
    }
}
