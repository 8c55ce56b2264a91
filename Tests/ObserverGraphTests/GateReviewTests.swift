import Dispatch
import ObserverGraph
import Testing

/// What a closure captures, to see when the kit releases the closure.
private final class Captured: Sendable {}

/// An actor that owns a source and observes it on itself, as a view model does.
private actor SourceOwner {
    let value = ObservableValue(0)
    var token: SubscriptionToken?
    let deinits: Counters

    init(deinits: Counters) {
        self.deinits = deinits
    }

    deinit { deinits.bump("owner") }

    func start() { token = value.observeValues { _ in } }
    func set(_ next: Int) { value.set(next) }
    func stop() {
        token?.cancel()
        token = nil
    }
}

/// An adversarial review of the lock-free paths: a source's roster and membership watch, the
/// actor gate, the domain gate and a source's claims. Each test states a promise of those paths
/// and checks it with exact histories, under the interleaving most likely to break it.
@Suite("Review of the gates", .timeLimit(.minutes(3)))
struct GateReviewTests {
    // MARK: - Roster and membership watch

    @Test("An observer joined and removed inside a delivery never gets its first event")
    func joinedThenRemovedInsideADelivery() {
        let value = ObservableValue(0)
        let log = EventLog()
        let late = GraphLock<SubscriptionToken?>(nil)
        let first = value.observeValuesNonisolated { received in
            log.append("first \(received)")
            guard received == 1 else { return }
            // Joins now: its first event waits behind this delivery. Then everybody leaves.
            let token = value.observeValuesNonisolated { log.append("late \($0)") }
            late.withLock { $0 = token }
            _ = value.removeAllObservers()
        }
        value.set(1)
        value.set(2)
        #expect(log.all == ["first 0", "first 1"])
        #expect(value.observers.isEmpty)
        withExtendedLifetime((first, late.withLock { $0 })) {}
    }

    @Test("An observer that joined while another thread delivers, then was removed, is never called")
    func joinedWhileAnotherThreadDeliversThenRemoved() {
        let value = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let log = EventLog()
        let holder = value.observeValuesNonisolated { received in
            log.append("holder \(received)")
            gate.hold(received)
        }
        let setter = BackgroundCall { value.set(1) }
        #expect(gate.waitUntilHeld())
        // The setter's thread is inside the delivery of 1: this join's first event queues.
        let late = value.observeValuesNonisolated { log.append("late \($0)") }
        #expect(value.removeAllObservers().count == 2)
        gate.open()
        #expect(setter.returned(within: 10))
        value.set(2)
        #expect(log.all == ["holder 0", "holder 1"])
        #expect(!late.isCancelled)  // removed from the graph, not cancelled
        withExtendedLifetime((holder, late)) {}
    }

    @Test("A closure removing every observer stops the later ones at once; a closure joining gets the rest")
    func removeAllAndJoinFromInsideADelivery() {
        let channel = EventChannel<Int>()
        let log = EventLog()
        let joined = GraphLock<SubscriptionToken?>(nil)
        let a = channel.observeValuesNonisolated { received in
            log.append("a \(received)")
            guard received == 2 else { return }
            _ = channel.removeAllObservers()
            let token = channel.observeValuesNonisolated { log.append("c \($0)") }
            joined.withLock { $0 = token }
        }
        let b = channel.observeValuesNonisolated { log.append("b \($0)") }
        for next in 1...4 { channel.send(next) }
        #expect(log.all == ["a 1", "b 1", "a 2", "c 3", "c 4"])
        #expect(channel.observers.count == 1)
        withExtendedLifetime((a, b, joined.withLock { $0 })) {}
    }

    @Test("A source released by its own observer mid-delivery ends that delivery, then finishes its streams")
    func sourceReleasedDuringItsOwnDelivery() {
        let log = EventLog()
        let holder = GraphLock<EventChannel<Int>?>(EventChannel<Int>())
        let tokens = ["a", "b"].map { name in
            holder.withLock { $0 }?.observeNonisolated { event in
                log.append("\(name) \(event == .value(1) ? "1" : event == .finished ? "end" : "?")")
                if name == "a" && event == .value(1) { holder.withLock { $0 = nil } }  // the last reference
            }
        }
        holder.withLock { $0 }?.send(1)
        #expect(holder.withLock { $0 } == nil)
        #expect(log.all == ["a 1", "b 1", "a end", "b end"])
        withExtendedLifetime(tokens) {}
    }

    @Test("A main-actor closure removing every observer stops the later ones within the same delivery")
    @MainActor
    func removeAllFromAFastCall() {
        let channel = EventChannel<Int>()
        var log: [String] = []
        let a = channel.observeValues { value in
            log.append("a \(value)")
            if value == 2 { _ = channel.removeAllObservers() }
        }
        let b = channel.observeValues { log.append("b \($0)") }
        let c = channel.observeValues { log.append("c \($0)") }
        for value in 1...3 { channel.send(value) }
        #expect(log == ["a 1", "b 1", "c 1", "a 2"])
        #expect(!b.isCancelled && !c.isCancelled)
        withExtendedLifetime((a, b, c)) {}
    }

    @Test("Stress: a removal on one thread stops a closure for every delivery starting after it returns")
    func removalFromAnotherThreadDuringSends() {
        for _ in 0..<200 {
            let channel = EventChannel<Int>()
            let seen = GraphLock<[Int]>([])
            let stop = GraphLock(false)
            let started = DispatchSemaphore(value: 0)
            let token = channel.observeValuesNonisolated { received in
                let count = seen.withLock { seen in
                    seen.append(received)
                    return seen.count
                }
                if count == 20 { started.signal() }
            }
            let sender = BackgroundCall {
                var next = 0
                while !stop.withLock({ $0 }) && next < 1_000_000 {
                    channel.send(next)
                    next += 1
                }
            }
            #expect(started.wait(timeout: .now() + 10) == .success)
            #expect(channel.removeAllObservers().count == 1)
            channel.send(-1)  // delivered after the removal: by this thread, or by the sender's
            stop.withLock { $0 = true }
            #expect(sender.returned(within: 10))
            let received = seen.withLock { $0 }
            #expect(!received.contains(-1))
            #expect(received == Array(0..<received.count))
            withExtendedLifetime(token) {}
        }
    }

    // MARK: - Actor gate

    @Test("A cancelled actor closure keeps nothing alive: its actor goes once nothing else holds it")
    func cancelledActorClosureReleasesItsActor() async {
        let deinits = Counters()
        var owner: SourceOwner? = SourceOwner(deinits: deinits)
        await owner?.start()
        await owner?.set(1)  // a delivery: the source's roster lists the closure now
        await owner?.stop()
        owner = nil
        _ = await eventually { deinits["owner"] != 0 }
        #expect(deinits["owner"] == 1)
    }

    @Test("Stress: cancelled on another thread during fast calls: no call for a value sent after that")
    @MainActor
    func cancelFromAnotherThreadDuringFastCalls() {
        for round in 0..<200 {
            let channel = EventChannel<Int>()
            let cancelled = GraphLock(false)
            var seen: [Int] = []
            var kept: Captured? = Captured()
            weak let watched = kept
            let token = channel.observeValues { [kept] value in
                withExtendedLifetime(kept) {}
                seen.append(value)
            }
            kept = nil
            let canceller = BackgroundCall {
                for _ in 0..<(round % 10) * 200 { _ = cancelled.withLock { $0 } }
                token.cancel()
                cancelled.withLock { $0 = true }
            }
            var firstAfterCancel: Int?
            for next in 0..<2_000 {
                if firstAfterCancel == nil && cancelled.withLock({ $0 }) { firstAfterCancel = next }
                channel.send(next)
            }
            #expect(canceller.returned(within: 10))
            channel.send(-1)
            #expect(seen == Array(0..<seen.count))
            if let firstAfterCancel { #expect(seen.count <= firstAfterCancel) }
            #expect(token.isCancelled)
            #expect(watched == nil)
        }
    }

    @Test("A terminal event from a thread racing fast calls: each value once, in order, the end last")
    @MainActor
    func terminationFromAThreadRacingFastCalls() async {
        for _ in 0..<20 {
            let channel = EventChannel<Int>()
            var seen: [Int] = []
            var ends = 0
            var callsAfterEnd = 0
            let accepted = GraphLock<[Int]>([])
            let token = channel.observe { event in
                if ends > 0 { callsAfterEnd += 1 }
                switch event {
                case .value(let value): seen.append(value)
                case .finished: ends += 1
                case .failed: ends += 100
                }
            }
            let sender = BackgroundCall {
                for next in 10_000..<10_300 where channel.send(next) {
                    accepted.withLock { $0.append(next) }
                }
                channel.finish()
            }
            var fromMain: [Int] = []
            for next in 0..<300 {
                if channel.send(next) { fromMain.append(next) }
                if next % 25 == 0 { await Task.yield() }
            }
            #expect(sender.returned(within: 10))
            #expect(await eventually { ends > 0 })
            let fromThread = accepted.withLock { $0 }
            #expect(ends == 1)
            #expect(callsAfterEnd == 0)
            #expect(seen.filter { $0 < 10_000 } == fromMain)
            #expect(seen.filter { $0 >= 10_000 } == fromThread)
            #expect(token.isCancelled)
            channel.send(-1)
            #expect(!seen.contains(-1))
        }
    }

    // MARK: - Domain gate

    @Test("A join made while a fast pass is held: sets made meanwhile follow it, in arrival order")
    func joinWhileAFastPassIsHeld() {
        let x = ObservableValue(0)
        let y = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let doubled = x.heldMap(gate, times: 2)
        let setX = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        let joined = doubled.combineLatest(y).map { "\($0.0),\($0.1)" }
        let recorder = OperatorRecorder(joined)
        // One component now, whose pass is held on the setter's thread: the join starts after
        // it, and both sets queue behind the join.
        y.value = 1
        x.value = 2
        #expect(recorder.values == [])
        #expect(joined.value == nil)
        gate.open()
        #expect(setX.returned(within: 10))
        #expect(recorder.values == ["2,0", "2,1", "4,1"])
        // The component is idle again: a set propagates at once on this thread.
        y.value = 2
        #expect(recorder.values.last == "4,2")
        #expect(joined.value == "4,2")
    }

    @Test("Stress: graphs joined while their passes run on other threads end consistent, nothing lost")
    func joinsRacingPassesOnOtherThreads() async {
        for _ in 0..<30 {
            let sources = (0..<3).map { _ in ObservableValue(0) }
            let maps = sources.map { source in source.map { $0 + 1 } }
            let recorders = maps.map { OperatorRecorder($0) }
            let joined = GraphLock<[DerivedValue<Int>]>([])
            await onBackgroundThreads(4) { index in
                if index == 3 {
                    for round in 0..<20 {
                        let pair = maps[round % 3].combineLatest(maps[(round + 1) % 3]).map { $0.0 + $0.1 }
                        joined.withLock { $0.append(pair) }
                    }
                    return
                }
                for next in 1...300 { sources[index].value = next }
            }
            for index in 0..<3 {
                #expect(recorders[index].values == Array(1...301))
                #expect(maps[index].value == 301)
            }
            for (round, pair) in joined.withLock({ $0 }).enumerated() {
                #expect(pair.value == 602, "join \(round)")
            }
        }
    }

    // MARK: - Claims

    @Test("Stress: sends from two threads and a finish race: every accepted send once, in order, end last")
    func finishRacingSends() async {
        for _ in 0..<50 {
            let channel = EventChannel<Int>()
            let events = GraphLock<[GraphEvent<Int>]>([])
            let accepted = GraphLock<[[Int]]>([[], []])
            let token = channel.observeNonisolated { event in events.withLock { $0.append(event) } }
            await onBackgroundThreads(3) { index in
                if index == 2 {
                    for _ in 0..<200 { _ = accepted.withLock { $0.count } }
                    channel.finish()
                    return
                }
                for next in 0..<500 where channel.send(index * 10_000 + next) {
                    accepted.withLock { $0[index].append(index * 10_000 + next) }
                }
            }
            let seen = events.withLock { $0 }
            let values = seen.compactMap(\.value)
            let sent = accepted.withLock { $0 }
            #expect(values.filter { $0 < 10_000 } == sent[0])
            #expect(values.filter { $0 >= 10_000 } == sent[1])
            #expect(seen.count == values.count + 1)
            #expect(seen.last?.isTerminal == true)
            #expect(token.isCancelled)
        }
    }

    @Test("update inside update, with observers on this thread and a sender on another: each change once")
    func nestedTransactionsRacingASender() async {
        let value = ObservableValue(0)
        let seen = GraphLock<[Int]>([])
        let token = value.observeValuesNonisolated { received in seen.withLock { $0.append(received) } }
        await onBackgroundThreads(2) { index in
            for _ in 0..<500 {
                if index == 0 {
                    value.update { outer in
                        value.update { $0 += 1 }
                        outer += 1
                    }
                } else {
                    value.update { $0 += 1 }
                }
            }
        }
        let received = seen.withLock { $0 }
        #expect(value.value == 1_500)
        // The current value first, then each change once: every count from 0 to 1,500, in order.
        #expect(received == Array(0...1_500))
        withExtendedLifetime(token) {}
    }
}
