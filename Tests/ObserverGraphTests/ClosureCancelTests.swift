import Dispatch
import ObserverGraph
import Testing

/// What a closure captures, to see when the kit releases the closure.
private final class Captured: Sendable {}

@Suite("Nonisolated closures: cancel against a running call", .timeLimit(.minutes(3)))
struct ClosureCancelTests {
    @Test("A cancel from another thread returns only after the running call, with the closure released")
    func cancelWaitsForTheRunningCall() {
        let channel = EventChannel<Int>()
        let hold = HoldGate(holding: 1)
        let calls = GraphLock<[Int]>([])
        var captured: Captured? = Captured()
        weak let watched = captured
        let token = channel.observeValuesNonisolated { [captured] value in
            withExtendedLifetime(captured) {}
            calls.withLock { $0.append(value) }
            hold.hold(value)
        }
        captured = nil
        let send = BackgroundCall { channel.send(1) }
        #expect(hold.waitUntilHeld())
        let cancel = BackgroundCall { token.cancel() }
        #expect(!cancel.returned(within: 0.05))  // the call is still running
        #expect(watched != nil)
        hold.open()
        #expect(cancel.returned(within: 10))
        #expect(watched == nil)  // released before cancel() returned
        #expect(send.returned(within: 10))
        channel.send(2)
        #expect(calls.withLock { $0 } == [1])
        #expect(token.isCancelled)
    }

    @Test("Two cancels from two threads both wait for the one running call")
    func twoCancellersWait() {
        let channel = EventChannel<Int>()
        let hold = HoldGate(holding: 1)
        let calls = GraphLock(0)
        let token = channel.observeValuesNonisolated { value in
            calls.withLock { $0 += 1 }
            hold.hold(value)
        }
        let send = BackgroundCall { channel.send(1) }
        #expect(hold.waitUntilHeld())
        let first = BackgroundCall { token.cancel() }
        let second = BackgroundCall { token.cancel() }
        #expect(!first.returned(within: 0.05))
        #expect(!second.returned(within: 0.01))
        hold.open()
        #expect(first.returned(within: 10))
        #expect(second.returned(within: 10))
        #expect(send.returned(within: 10))
        channel.send(2)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test("A closure cancelling its own token returns at once; it is released when its call returns")
    func selfCancel() {
        let channel = EventChannel<Int>()
        let calls = GraphLock<[Int]>([])
        let token = GraphLock<SubscriptionToken?>(nil)
        let releasedDuringCall = GraphLock<Bool?>(nil)
        var captured: Captured? = Captured()
        weak let watched = captured
        let observed = channel.observeValuesNonisolated { [captured] value in
            withExtendedLifetime(captured) {}
            calls.withLock { $0.append(value) }
            if value == 2 {
                token.withLock { $0 }?.cancel()  // from inside its own call: no wait
                releasedDuringCall.withLock { $0 = watched == nil }
            }
        }
        token.withLock { $0 = observed }
        captured = nil
        for value in 1...4 { channel.send(value) }
        #expect(calls.withLock { $0 } == [1, 2])
        #expect(releasedDuringCall.withLock { $0 } == false)  // still running then
        #expect(watched == nil)
        #expect(observed.isCancelled)
    }

    @Test("A terminal event closes the observation, already during its call: later cancels return at once")
    func terminalCloses() {
        let value = ObservableValue(0)
        let events = GraphLock<[GraphEvent<Int>]>([])
        let box = GraphLock<SubscriptionToken?>(nil)
        let overDuringCall = GraphLock<[Bool]>([])
        let token = value.observeNonisolated { event in
            events.withLock { $0.append(event) }
            if let token = box.withLock({ $0 }) { overDuringCall.withLock { $0.append(token.isCancelled) } }
        }
        box.withLock { $0 = token }
        #expect(!token.isCancelled)
        value.set(1)
        value.finish()
        #expect(overDuringCall.withLock { $0 } == [false, true])  // the value's call, the terminal's
        #expect(token.isCancelled)
        token.cancel()
        #expect(events.withLock { $0 }.count == 3)
        #expect(events.withLock { $0 }.last?.isTerminal == true)
    }

    @Test("Cancels racing 2,000 sends from another thread: nothing delivered after any cancel returns")
    func cancelRaces() {
        for _ in 0..<50 {
            let channel = EventChannel<Int>()
            let cancelled = GraphLock(false)
            let late = GraphLock(0)
            let token = channel.observeValuesNonisolated { _ in
                if cancelled.withLock({ $0 }) { late.withLock { $0 += 1 } }
            }
            race(threads: 2) { thread in
                if thread == 0 {
                    for value in 0..<2_000 { channel.send(value) }
                } else {
                    token.cancel()
                    cancelled.withLock { $0 = true }
                }
            }
            #expect(late.withLock { $0 } == 0)
        }
    }
}
