import ObserverGraph
import Testing

/// What a closure captures, to see when the kit releases the closure.
private final class Kept: Sendable {}

/// Where `LoggedRelease` records its release, and a closure the end of its call: a global, so
/// that a closure reaches it without capturing it.
private let releaseLog = GraphLock<[String]>([])

/// A capture that records when the closure holding it is released.
private final class LoggedRelease: Sendable {
    deinit { releaseLog.withLock { $0.append("closure released") } }
}

/// A closure on the main actor fed from the main actor is called through the actor gate's fast
/// path; these tests check that it meets the mailbox path (values from other threads), cancels
/// and termination exactly as the lock path does.
@Suite("Actor closures: the fast path for values sent on their own actor", .timeLimit(.minutes(3)))
struct ActorFastPathTests {
    @Test("A closure that sends to its own source is not re-entered: the new values follow its return")
    @MainActor
    func sendsFromInsideTheClosure() {
        let value = ObservableValue(0)
        var seen: [Int] = []
        var depth = 0
        var deepest = 0
        let token = value.observeValues { received in
            depth += 1
            deepest = max(deepest, depth)
            seen.append(received)
            if received == 1 {
                value.set(2)
                value.set(3)
                seen.append(-1)  // the end of the call for 1
            }
            depth -= 1
        }
        value.set(1)
        value.set(4)
        #expect(seen == [0, 1, -1, 2, 3, 4])
        #expect(deepest == 1)
        withExtendedLifetime(token) {}
    }

    @Test("Values sent from main and from a thread at once reach a main-actor closure in source order")
    @MainActor
    func mainAndThreadTogether() async {
        let channel = EventChannel<Int>()
        let reference = GraphLock<[Int]>([])
        let inOrder = channel.observeValuesNonisolated { value in reference.withLock { $0.append(value) } }
        var seen: [Int] = []
        let token = channel.observeValues { seen.append($0) }
        let perSender = 20_000
        async let background: Void = onBackgroundThreads(1) { _ in
            for value in 0..<perSender { channel.send(value) }
        }
        for value in perSender..<(2 * perSender) {
            channel.send(value)
            if value % 500 == 0 { await Task.yield() }
        }
        await background
        #expect(await eventually { seen.count == 2 * perSender })
        #expect(seen == reference.withLock { $0 })
        #expect(Set(seen).count == 2 * perSender)
        withExtendedLifetime((inOrder, token)) {}
    }

    @Test("Cancelled inside its own call: no later call, the closure released once the call returned")
    @MainActor
    func cancelInsideTheCall() {
        let channel = EventChannel<Int>()
        var seen: [Int] = []
        var token: SubscriptionToken?
        var kept: Kept? = Kept()
        weak let watched = kept
        token = channel.observeValues { [kept] value in
            withExtendedLifetime(kept) {}
            seen.append(value)
            if value == 2 { token?.cancel() }
        }
        kept = nil
        for value in 1...5 { channel.send(value) }
        #expect(seen == [1, 2])
        #expect(watched == nil)
        #expect(token?.isCancelled == true)
    }

    @Test("Cancelled inside its own call: what the closure captured lives until the call returns")
    @MainActor
    func cancelInsideTheCallKeepsCaptures() {
        // Released at the cancel, the closure would lose its captures while it still runs (a use
        // after free); the log shows the order whether or not that crashes.
        let channel = EventChannel<Int>()
        var token: SubscriptionToken?
        var probe: LoggedRelease? = LoggedRelease()
        token = channel.observeValues { [probe] value in
            withExtendedLifetime(probe) {}
            token?.cancel()
            releaseLog.withLock { $0.append("call for \(value) returns") }
        }
        probe = nil
        channel.send(1)
        channel.send(2)
        #expect(releaseLog.withLock { $0 } == ["call for 1 returns", "closure released"])
        #expect(token?.isCancelled == true)
    }

    @Test("Cancelled from another thread during a call: cancel returns at once, no later call")
    @MainActor
    func cancelFromAnotherThreadDuringTheCall() {
        let channel = EventChannel<Int>()
        let shared = GraphLock<SubscriptionToken?>(nil)
        var seen: [Int] = []
        var cancelReturned = false
        var kept: Kept? = Kept()
        weak let watched = kept
        let token = channel.observeValues { [kept] value in
            withExtendedLifetime(kept) {}
            seen.append(value)
            if value == 2 {
                // The call is running on the main actor: an actor closure's cancel never waits.
                let cancel = BackgroundCall { shared.withLock { $0 }?.cancel() }
                cancelReturned = cancel.returned(within: 10)
            }
        }
        shared.withLock { $0 = token }
        kept = nil
        for value in 1...4 { channel.send(value) }
        #expect(cancelReturned)
        #expect(seen == [1, 2])
        #expect(watched == nil)  // released when the call that saw the cancel returned
        #expect(token.isCancelled)
    }

    @Test("The terminal event after fast calls is the last call, and releases the closure")
    @MainActor
    func terminationAfterFastCalls() {
        let channel = EventChannel<Int>()
        var events: [String] = []
        var kept: Kept? = Kept()
        weak let watched = kept
        let token = channel.observe { [kept] event in
            withExtendedLifetime(kept) {}
            switch event {
            case .value(let value): events.append("\(value)")
            case .finished: events.append("finished")
            case .failed: events.append("failed")
            }
        }
        kept = nil
        channel.send(1)
        channel.send(2)
        channel.finish()
        channel.send(3)
        #expect(events == ["1", "2", "finished"])
        #expect(watched == nil)
        #expect(token.isCancelled)
    }
}
