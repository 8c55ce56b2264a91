import Dispatch
import Foundation
import ObserverGraph
import ObserverGraphTesting
import Testing

@Suite("Races: propagation across merges, released operators, the call gate", .timeLimit(.minutes(3)))
struct RaceRegressionTests {
    /// Each round, two threads released together terminate one channel, one with `finish()`,
    /// the other with `fail(_:)`: the check for a terminal event and its recording must be one
    /// critical section, or both calls can succeed and the second overwrite the first.
    @Test("Two threads terminating one channel at once: one wins, and its event is the only terminal one")
    func racingTerminations() {
        let rounds = 2_000
        let channels = (0..<rounds).map { _ in EventChannel<Int>() }
        let recorders = (0..<rounds).map { _ in Recorder<Int>() }
        let tokens = zip(channels, recorders).map { $0.observeNonisolated($1.record) }
        let wins = GraphLock([[Bool]](repeating: [false, false], count: rounds))
        let arrived = GraphLock(0)
        race(threads: 2) { thread in
            for round in 0..<rounds {
                // Both threads reach the call within a few instructions of each other.
                arrived.withLock { $0 += 1 }
                while arrived.withLock({ $0 }) < 2 * (round + 1) {}
                let won = thread == 0 ? channels[round].finish() : channels[round].fail(Boom(code: round))
                wins.withLock { $0[round][thread] = won }
            }
        }
        var wrong: [String] = []
        for round in 0..<rounds {
            let won = wins.withLock { $0[round] }
            let terminal: GraphEvent<Int> = won[0] ? .finished : .failed(Boom(code: round))
            if won.filter({ $0 }).count != 1 || channels[round].terminalEvent != terminal
                || recorders[round].events != [terminal]
            {
                wrong.append("round \(round): won \(won), \(recorders[round].events)")
            }
        }
        #expect(wrong.count == 0)
        #expect(Array(wrong.prefix(3)) == [])
        withExtendedLifetime(tokens) {}
    }

    /// `a` and `c` are one graph (joined by `merge`), `b` another. A set of `a` is held inside
    /// `m` on a background thread; the test joins `m` with `b`, then sets `c` (queued behind the
    /// held pass, which began first). The join starts from the held change, when its pass ends,
    /// and the later change of `c` follows it, not before it.
    @Test("A change crossing a merge is not overtaken by a later change of the same graph")
    func crossingChangeKeepsArrivalOrder() {
        let a = ObservableValue(0)
        let c = ObservableValue(0)
        let b = ObservableValue(0)
        let hold = HoldGate(holding: 1)
        let m = a.merge(c).map { value -> Int in
            hold.hold(value)
            return value
        }
        let setA = BackgroundCall { a.value = 1 }
        #expect(hold.waitUntilHeld())
        let joined = m.combineLatest(b).map { "\($0.0),\($0.1)" }
        let recorder = OperatorRecorder(joined)
        #expect(recorder.values == [])
        c.value = 2  // same graph as `a`, after it: queued behind the held pass
        hold.open()
        #expect(setA.returned(within: 10))
        #expect(m.value == 2)
        #expect(recorder.values == ["1,0", "2,0"])
        #expect(joined.value == "2,0")
    }

    /// The same through `flatMapLatest`: it switches to `scaled` while another thread holds a
    /// pass of `scaled`'s graph; a later change of that graph must not overtake what the held
    /// pass sends along the switch's new edge.
    @Test("A switch into a running graph: the held change reaches the result before a later one")
    func switchCrossingKeepsArrivalOrder() {
        let i = ObservableValue(0)
        let j = ObservableValue(0)
        let hold = HoldGate(holding: 1)
        let scaled = i.merge(j).map { value -> Int in
            hold.hold(value)
            return value * 10
        }
        let outer = ObservableValue(0)
        let idle = ObservableValue(-1)
        let followed = outer.flatMapLatest { $0 == 0 ? idle.map { $0 } : scaled }
        let recorder = OperatorRecorder(followed)
        let setI = BackgroundCall { i.value = 1 }
        #expect(hold.waitUntilHeld())
        outer.value = 1  // switches to `scaled`, whose latest value is still 0
        j.value = 2  // `scaled`'s graph, after the held change: queued behind it
        hold.open()
        #expect(setI.returned(within: 10))
        #expect(scaled.value == 20)
        #expect(recorder.values == [-1, 0, 10, 20])
        #expect(followed.value == 20)
    }

    /// The call gate under load: one thread sends values then finishes, another cancels at a
    /// varying point. Each value is delivered once, in order (a prefix of what was sent), no
    /// call starts after `cancel()` returns, and the closure is released by then.
    @Test("Stress: sends, a terminal event and a cancel race: each value once, in order, none after cancel")
    func callGateRaces() {
        final class Captured: Sendable {}
        for round in 0..<100 {
            let channel = EventChannel<Int>()
            let seen = GraphLock<[Int]>([])
            let cancelled = GraphLock(false)
            let late = GraphLock(0)
            var captured: Captured? = Captured()
            weak let watched = captured
            let token = channel.observeNonisolated { [captured] event in
                withExtendedLifetime(captured) {}
                if cancelled.withLock({ $0 }) { late.withLock { $0 += 1 } }
                if let value = event.value { seen.withLock { $0.append(value) } }
            }
            captured = nil
            let released = GraphLock(false)
            race(threads: 2) { thread in
                if thread == 0 {
                    for value in 0..<300 { channel.send(value) }
                    channel.finish()
                } else {
                    while seen.withLock({ $0.count }) < round * 3, !token.isCancelled {}
                    token.cancel()
                    cancelled.withLock { $0 = true }
                    released.withLock { $0 = watched == nil }
                }
            }
            let values = seen.withLock { $0 }
            #expect(values == Array(0..<values.count))
            #expect(late.withLock { $0 } == 0)
            #expect(token.isCancelled)
            #expect(watched == nil)
            // Released before cancel() returned, unless the terminal event closed it first (then
            // the delivering thread releases it as the call ends).
            if values.count < 300 { #expect(released.withLock { $0 }) }
        }
    }

    /// A `flatMapLatest` released while another thread runs its `transform`: the release drops
    /// the edge of the inner source followed then, and the pass then attaches the new inner
    /// source and keeps its edge. Nothing removes that edge any more: the inner source, its
    /// input and the released operator's node keep each other alive, and every change of the
    /// inner source still runs the released operator.
    @Test("A flatMapLatest released during its transform leaves no edge, and leaks nothing")
    func switchReleasedDuringTransform() {
        struct Weak: Sendable {
            weak var object: ObservableValue<Int>?
        }
        let outer = ObservableValue(0)
        let idle = ObservableValue(-1)
        let hold = HoldGate(holding: 1)
        let made = GraphLock(Weak())
        let runs = GraphLock(0)
        var followed: DerivedValue<Int>? = outer.flatMapLatest { value -> DerivedValue<Int> in
            hold.hold(value)
            guard value != 0 else { return idle.map { $0 } }
            let inner = ObservableValue(value * 10)
            made.withLock { $0.object = inner }
            return inner.map { value in
                runs.withLock { $0 += 1 }
                return value
            }
        }
        #expect(followed?.value == -1)
        let setOuter = BackgroundCall { outer.value = 1 }
        #expect(hold.waitUntilHeld())
        followed = nil  // released while the pass is inside `transform`
        hold.open()
        #expect(setOuter.returned(within: 10))
        #expect(runs.withLock { $0 } == 1)  // the start value
        made.withLock { $0.object }?.value = 20
        #expect(runs.withLock { $0 } == 1)  // nothing follows the inner source now
        #expect(made.withLock { $0.object } == nil)  // and nothing keeps it
        withExtendedLifetime(followed) {}
    }

    /// A `debounce` released while another thread runs its handler (held here in the clock's
    /// `now`, which the handler reads to schedule): the release cancels the pending timer, then
    /// the handler schedules a new one, whose task sleeps on until its deadline although the
    /// operator is gone ("no task outlives the sleep it cancels").
    @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
    @Test("A timed operator released during its handler leaves no timer sleeping")
    func timedReleasedDuringHandler() async {
        let base = TestClock()
        let hold = HoldGate(holding: 2)
        let clock = CountingClock(base: base, hold: hold)
        let x = ObservableValue(0)
        var debounced: DerivedValue<Int>? = x.debounce(for: .seconds(1), clock: clock)
        #expect(await sleepers(of: base, reach: 1))  // the start value's timer
        let setX = BackgroundCall { x.value = 1 }
        #expect(hold.waitUntilHeld())  // inside the handler, before it schedules
        debounced = nil
        hold.open()
        #expect(setX.returned(within: 10))
        #expect(await !sleepers(of: base, reach: 1, within: .milliseconds(300)))
        withExtendedLifetime(debounced) {}
    }

    /// Observation 1's closure holds (through `owner`, its only holder) the token of
    /// observation 2, whose closure cancels observation 1 while observation 1's call runs on
    /// another thread. The call gate releases closure 1 on the delivering thread before it wakes
    /// the canceller: the release drops token 2, whose deinit waits for closure 2's call, which
    /// waits in `cancel()` for the wake-up that comes after the release. Neither thread returns.
    @Test("Releasing a closure that holds the token of the closure cancelling it does not deadlock")
    func releaseDoesNotWaitForTheCanceller() {
        final class Owner: Sendable {
            let token = GraphLock<SubscriptionToken?>(nil)
        }
        let first = EventChannel<Int>()
        let second = EventChannel<Int>()
        let hold = HoldGate(holding: 1)
        let firstToken = GraphLock<SubscriptionToken?>(nil)
        var owner: Owner? = Owner()
        firstToken.withLock { [owner] token in
            token = first.observeValuesNonisolated { [owner] value in
                withExtendedLifetime(owner) {}
                hold.hold(value)
            }
        }
        owner?.token.withLock {
            $0 = second.observeValuesNonisolated { _ in firstToken.withLock { $0 }?.cancel() }
        }
        owner = nil  // closure 1 holds it now, and so token 2
        let sendFirst = BackgroundCall { first.send(1) }
        #expect(hold.waitUntilHeld())
        let sendSecond = BackgroundCall { second.send(1) }  // closure 2 cancels observation 1: waits
        // The cancel has marked the running call (the token reads cancelled) and waits for it.
        // (Polls with a pause, not a spin: on a loaded machine the threads it waits for need the CPU.)
        let marked = ContinuousClock.now.advanced(by: .seconds(10))
        while firstToken.withLock({ $0 })?.isCancelled != true, ContinuousClock.now < marked {
            Thread.sleep(forTimeInterval: 0.0005)
        }
        #expect(!sendSecond.returned(within: 0.05))
        hold.open()
        #expect(sendFirst.returned(within: 10))
        #expect(sendSecond.returned(within: 10))
    }

    /// Regression stress (meant for the thread sanitizer too): threads set four graphs while
    /// another joins them with `combineLatest` and `flatMapLatest` and releases half of what it
    /// made. Once every set has returned, every value kept holds its inputs' latest values.
    /// (The sets are bounded: see the comment on the setters.)
    @Test("Stress: joins and switches made and released while four graphs propagate end consistent")
    func joinsAndSwitchesUnderLoad() {
        let sources = (0..<4).map { ObservableValue($0) }
        let mapped = sources.map { source in source.map { $0 * 2 } }
        // What was kept, and the sources whose doubled values it adds up.
        let kept = GraphLock<[(DerivedValue<Int>, [Int])]>([])
        let done = GraphLock(false)
        race(threads: 5) { thread in
            if thread == 4 {
                for step in 0..<60 {
                    let (i, j) = (step % 4, (step / 4 + step + 1) % 4)
                    let join = mapped[i].combineLatest(mapped[j]).map { $0.0 + $0.1 }
                    let switched = sources[i].flatMapLatest { _ in mapped[j] }
                    let token = join.observeValuesNonisolated { _ in }
                    if step % 2 == 0 {
                        kept.withLock {
                            $0.append((join, [i, j]))
                            $0.append((switched, [j]))
                        }
                    }
                    token.cancel()
                }
                done.withLock { $0 = true }
            } else {
                // A bounded run of sets, going on while the joins are made: a thread that builds a
                // join on an idle graph runs the passes queued meanwhile, as a set does, so sets
                // that last until the joins are done could keep it propagating for ever.
                var step = 0
                while step < 300 || (step < 20_000 && !done.withLock({ $0 })) {
                    step += 1
                    sources[thread].value = step * 4 + thread
                }
            }
        }
        for (value, inputs) in kept.withLock({ $0 }) {
            #expect(value.value == inputs.map { sources[$0].value * 2 }.reduce(0, +))
        }
    }
}

/// A clock that counts the reads of `now` and holds the thread on the read `hold` names.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
private struct CountingClock: Clock {
    typealias Instant = TestClock.Instant
    let base: TestClock
    let hold: HoldGate
    private let reads = GraphLock(0)

    init(base: TestClock, hold: HoldGate) {
        self.base = base
        self.hold = hold
    }

    var now: Instant {
        let read = reads.withLock { reads in
            reads += 1
            return reads
        }
        hold.hold(read)
        return base.now
    }

    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}

/// Whether `clock` has `count` sleepers within `limit` (polled).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
private func sleepers(
    of clock: TestClock, reach count: Int, within limit: Duration = .seconds(120)
) async -> Bool {
    let end = ContinuousClock.now.advanced(by: limit)
    while ContinuousClock.now < end {
        if clock.sleeperCount == count { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return clock.sleeperCount == count
}
