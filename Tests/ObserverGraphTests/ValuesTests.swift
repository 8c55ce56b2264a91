import Dispatch
import Foundation
import ObserverGraph
import Testing

/// Records every event an observation delivers, thread-safely.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = GraphLock<[GraphEvent<Value>]>([])
    var events: [GraphEvent<Value>] { storage.withLock { $0 } }
    var values: [Value] { events.compactMap(\.value) }
    @Sendable func record(_ event: GraphEvent<Value>) { storage.withLock { $0.append(event) } }
}

struct Boom: Error, Equatable {
    let code: Int
}

@Suite("Values and channels: replay, termination, recoverable errors")
struct ValuesTests {
    @Test("An observable value delivers its current value at once, then every change")
    func valueReplays() {
        let value = ObservableValue(1)
        let recorder = Recorder<Int>()
        let token = value.observeNonisolated(recorder.record)
        #expect(recorder.events == [.value(1)])
        value.value = 2
        value.update { $0 += 10 }
        #expect(recorder.events == [.value(1), .value(2), .value(12)])
        #expect(value.value == 12)
        #expect(value.observerCount == 1)  // the closure observer is a real observer in the graph
        withExtendedLifetime(token) {}
    }

    @Test("A channel does not replay: observers get only what is sent after they joined")
    func channelDoesNotReplay() {
        let channel = EventChannel<String>()
        #expect(channel.send("before"))
        let recorder = Recorder<String>()
        let token = channel.observeNonisolated(recorder.record)
        channel.send("after")
        #expect(recorder.events == [.value("after")])
        let voids = EventChannel<Void>()
        let count = GraphLock(0)
        let voidToken = voids.observeValuesNonisolated { count.withLock { $0 += 1 } }
        voids.send()
        voids.send()
        #expect(count.withLock { $0 } == 2)
        withExtendedLifetime((token, voidToken)) {}
    }

    @Test("Equal values are delivered by default and skipped on request")
    func equalValues() {
        let every = ObservableValue(5)
        let distinct = ObservableValue(5, skipsEqualValues: true)
        let everyRecorder = Recorder<Int>()
        let distinctRecorder = Recorder<Int>()
        let tokens = [
            every.observeNonisolated(everyRecorder.record),
            distinct.observeNonisolated(distinctRecorder.record),
        ]
        for next in [5, 6, 6, 5] {
            every.value = next
            distinct.value = next
        }
        distinct.update { $0 = 5 }
        #expect(everyRecorder.values == [5, 5, 6, 6, 5])
        #expect(distinctRecorder.values == [5, 6, 5])
        withExtendedLifetime(tokens) {}
    }

    @Test("Finishing: observers get .finished, are removed, and nothing follows")
    func finishing() {
        let channel = EventChannel<Int>()
        let recorder = Recorder<Int>()
        let token = channel.observeNonisolated(recorder.record)
        channel.send(1)
        #expect(channel.finish())
        #expect(!channel.finish())
        #expect(!channel.fail(Boom(code: 1)))
        #expect(!channel.send(2))
        #expect(recorder.events == [.value(1), .finished])
        #expect(channel.observerCount == 0)
        #expect(token.isCancelled)
        #expect(channel.terminalEvent == .finished)
    }

    @Test("Failing: observers get .failed; a late observer gets only the terminal event, at once")
    func failingAndLateObservers() {
        let value = ObservableValue("a")
        let early = Recorder<String>()
        let earlyToken = value.observeNonisolated(early.record)
        #expect(value.fail(Boom(code: 7)))
        value.value = "ignored"
        #expect(value.value == "a")
        let late = Recorder<String>()
        let lateToken = value.observeNonisolated(late.record)
        #expect(early.events == [.value("a"), .failed(Boom(code: 7))])
        #expect(late.events == [.failed(Boom(code: 7))])
        #expect(value.observerCount == 0)
        #expect(lateToken.isCancelled)
        withExtendedLifetime(earlyToken) {}
    }

    @Test("Recoverable errors are values: a ViewState stream goes on after an error")
    func recoverableErrorsAsViewState() {
        struct Offline: Error {}
        let state = ObservableValue<ViewState<[String]>>(.loading)
        let recorder = Recorder<ViewState<[String]>>()
        let token = state.observeNonisolated(recorder.record)
        state.value = ViewState(Result<[String], Offline>.failure(Offline()))
        state.value = ViewState(Result<[String], Offline>.success([]))
        state.value = ViewState(Result<[String], Offline>.success(["Laundry"]))
        #expect(
            recorder.values == [.loading, .error(Offline()), .empty, .result(["Laundry"])])
        #expect(state.terminalEvent == nil)
        #expect(state.value.result == ["Laundry"])

        let results = EventChannel<Result<Int, Boom>>()
        let resultRecorder = Recorder<Result<Int, Boom>>()
        let resultToken = results.observeNonisolated(resultRecorder.record)
        results.send(.failure(Boom(code: 1)))
        results.send(.success(3))
        #expect(resultRecorder.values == [.failure(Boom(code: 1)), .success(3)])
        withExtendedLifetime((token, resultToken)) {}
    }
}

@Suite("Values and channels: subscription tokens")
struct TokenTests {
    @Test("cancel() stops delivery and removes the observer; it is idempotent")
    func explicitCancel() {
        let channel = EventChannel<Int>()
        let recorder = Recorder<Int>()
        let token = channel.observeNonisolated(recorder.record)
        channel.send(1)
        token.cancel()
        token.cancel()
        channel.send(2)
        #expect(recorder.values == [1])
        #expect(token.isCancelled)
        #expect(channel.observerCount == 0)
    }

    @Test("Dropping the token cancels the observation")
    func deinitCancels() {
        let channel = EventChannel<Int>()
        let recorder = Recorder<Int>()
        var token: SubscriptionToken? = channel.observeNonisolated(recorder.record)
        channel.send(1)
        #expect(token != nil)
        token = nil
        channel.send(2)
        #expect(recorder.values == [1])
        #expect(channel.observerCount == 0)
    }

    @Test("Cancelling from inside the callback: no later event reaches it, others go on")
    func cancelInsideCallback() {
        let channel = EventChannel<Int>()
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        let box = GraphLock<SubscriptionToken?>(nil)
        let token = channel.observeNonisolated { event in
            first.record(event)
            if event.value == 2 { box.withLock { $0 }?.cancel() }
        }
        box.withLock { $0 = token }
        let other = channel.observeNonisolated(second.record)
        channel.send(1)
        channel.send(2)
        channel.send(3)
        #expect(first.values == [1, 2])
        #expect(second.values == [1, 2, 3])
        withExtendedLifetime(other) {}
    }

    @Test("A token bag cancels everything it holds, on cancelAll and on deinit")
    func tokenBag() {
        let value = ObservableValue(0)
        let recorder = Recorder<Int>()
        var bag: TokenBag? = TokenBag()
        for _ in 0..<3 { value.observeNonisolated(recorder.record).store(in: bag!) }
        #expect(bag!.count == 3)
        value.value = 1
        #expect(recorder.values == [0, 0, 0, 1, 1, 1])
        bag!.cancelAll()
        #expect(bag!.count == 0)
        value.value = 2
        #expect(value.observerCount == 0)
        value.observeNonisolated(recorder.record).store(in: bag!)
        bag = nil
        value.value = 3
        #expect(recorder.values == [0, 0, 0, 1, 1, 1, 2])
        #expect(value.observerCount == 0)
    }

    @Test("Cancelling from another thread during sends: nothing is delivered after cancel() returns")
    func concurrentCancel() {
        for round in 0..<20 {
            let channel = EventChannel<Int>()
            let running = GraphLock(0)  // deliveries in progress right now
            let started = GraphLock(0)
            let delivered = GraphLock(0)
            let cancelled = GraphLock(false)
            let afterCancel = GraphLock(0)
            let token = channel.observeNonisolated { event in
                running.withLock { $0 += 1 }
                started.withLock { $0 += 1 }
                if cancelled.withLock({ $0 }) { afterCancel.withLock { $0 += 1 } }
                var spin = event.value ?? 0
                for _ in 0..<2_000 { spin = spin &* 31 &+ 7 }  // widen the window
                if spin == 42 { afterCancel.withLock { $0 += 0 } }
                delivered.withLock { $0 += 1 }
                running.withLock { $0 -= 1 }
            }
            let stillRunning = GraphLock(-1)
            let sent = GraphLock(0)
            race(threads: 2) { thread in
                if thread == 0 {
                    // Send until the cancel has happened, then some more: at any speed, the
                    // cancel falls in the middle of the stream.
                    var i = 0
                    var after = 0
                    while after < 200 {
                        channel.send(i)
                        i += 1
                        if cancelled.withLock({ $0 }) { after += 1 }
                    }
                    sent.withLock { $0 = i }
                } else {
                    // Cancel while a delivery is (most likely) in the middle of its work.
                    while started.withLock({ $0 }) < 50 + round * 10 {}
                    token.cancel()
                    // A delivery still running now would be "delivered after cancel() returned".
                    stillRunning.withLock { $0 = running.withLock { $0 } }
                    cancelled.withLock { $0 = true }
                }
            }
            #expect(stillRunning.withLock { $0 } == 0, "round \(round)")
            #expect(afterCancel.withLock { $0 } == 0, "round \(round)")
            #expect(delivered.withLock { $0 } < sent.withLock { $0 })
        }
    }
}

@Suite("Values and channels: cancel with a concurrent queue")
struct ConcurrentQueueCancelTests {
    @Test("With overlapping deliveries on a concurrent queue, cancel() waits for all of them")
    func cancelWaitsForEveryDelivery() {
        let queue = DispatchQueue(label: "observer-graph.tests.concurrent", attributes: .concurrent)
        for round in 0..<10 {
            let channel = EventChannel<Int>()
            let running = GraphLock(0)
            let maxRunning = GraphLock(0)
            let started = DispatchSemaphore(value: 0)
            let token = channel.observe(on: queue) { _ in
                let now = running.withLock { value -> Int in
                    value += 1
                    return value
                }
                maxRunning.withLock { $0 = max($0, now) }
                started.signal()
                var spin = 0
                for i in 0..<200_000 { spin = spin &+ i }
                if spin == 1 { maxRunning.withLock { $0 += 0 } }
                running.withLock { $0 -= 1 }
            }
            for i in 0..<4 { channel.send(i) }
            started.wait()
            started.wait()
            token.cancel()
            #expect(running.withLock { $0 } == 0, "round \(round): a delivery was still running")
            queue.sync(flags: .barrier) {}
        }
    }
}

@Suite("Values and channels: ordering, threads, queues and async")
struct ValueOrderingTests {
    @Test("Concurrent update from many threads: no increment is lost, deliveries are in order")
    func concurrentUpdates() {
        let value = ObservableValue(0)
        let recorder = Recorder<Int>()
        let token = value.observeNonisolated(recorder.record)
        race(threads: 4) { _ in
            for _ in 0..<5_000 { value.update { $0 += 1 } }
        }
        #expect(value.value == 20_000)
        #expect(recorder.values == Array(0...20_000))
        withExtendedLifetime(token) {}
    }

    @Test("Sends and sets from many threads, in short bursts: each is delivered once, none is left queued")
    func burstsFromManyThreads() {
        // Each burst starts a drain that empties the queue and ends without the lock, while
        // other threads queue: a value queued as a drain ends must be delivered by someone.
        let channel = EventChannel<Int>()
        let value = ObservableValue(-1)
        let sent = Recorder<Int>()
        let set = Recorder<Int>()
        let tokens = [channel.observeNonisolated(sent.record), value.observeNonisolated(set.record)]
        race(threads: 4) { thread in
            for step in 0..<3_000 {
                channel.send(thread * 10_000 + step)
                value.value = thread * 10_000 + step
                if step % 64 == 0 { Thread.sleep(forTimeInterval: 0.000_01) }
            }
        }
        for recorder in [sent, set] {
            let values = recorder.values.filter { $0 >= 0 }
            #expect(values.count == 12_000)
            for thread in 0..<4 {
                let own = values.filter { $0 / 10_000 == thread }
                let inOrder = own == Array(thread * 10_000..<thread * 10_000 + 3_000)
                let sorted = own == own.sorted()
                #expect(inOrder, "thread \(thread): \(own.count) of 3,000 delivered, sorted: \(sorted)")
            }
        }
        #expect(set.values.last == value.value)
        withExtendedLifetime(tokens) {}
    }

    @Test("Observers that write back from their callbacks: everyone sees the same values in order")
    func reentrantWritesKeepOrder() {
        let value = ObservableValue(0)
        let recorders = (0..<3).map { _ in Recorder<Int>() }
        var tokens: [SubscriptionToken] = []
        // Observer 0 doubles odd values, observer 1 bumps small even values; observer 2 only
        // watches. Each write happens inside a delivery.
        tokens.append(
            value.observeNonisolated { event in
                recorders[0].record(event)
                if let v = event.value, v % 2 == 1, v < 50 { value.value = v * 2 }
            })
        tokens.append(
            value.observeNonisolated { event in
                recorders[1].record(event)
                if let v = event.value, v % 2 == 0, v < 50 { value.update { $0 += 1 } }
            })
        tokens.append(value.observeNonisolated(recorders[2].record))
        // While observer 1 joined, its first value (0) started the chain; observer 2 joined after
        // it ended and got 62. Then one outside write starts the chain again.
        value.value = 1
        let chain = [1, 2, 3, 6, 7, 14, 15, 30, 31, 62]
        #expect(recorders[0].values == [0] + chain + chain)
        #expect(recorders[1].values == [0] + chain + chain)
        #expect(recorders[2].values == [62] + chain)
        #expect(value.value == 62)
        withExtendedLifetime(tokens) {}
    }

    @Test("An observer added from inside a delivery gets its first value after that delivery")
    func observeDuringDelivery() {
        let value = ObservableValue(0)
        let log = EventLog()
        let inner = GraphLock<SubscriptionToken?>(nil)
        let outer = value.observeValuesNonisolated { v in
            log.append("outer \(v)")
            if v == 1 {
                let token = value.observeValuesNonisolated { log.append("inner \($0)") }
                inner.withLock { $0 = token }
            }
        }
        let second = value.observeValuesNonisolated { log.append("second \($0)") }
        log.clear()
        value.value = 1
        value.value = 2
        #expect(log.all == ["outer 1", "second 1", "inner 1", "outer 2", "second 2", "inner 2"])
        withExtendedLifetime((outer, second)) {}
    }

    @Test("Joining while a change is queued: the newcomer gets that value exactly once")
    func joinWhileChangeQueued() {
        let value = ObservableValue(0)
        let newcomer = Recorder<Int>()
        let newcomerToken = GraphLock<SubscriptionToken?>(nil)
        let writer = value.observeValuesNonisolated { v in
            guard v == 1 else { return }
            value.value = 5  // queued: a delivery is running
            let token = value.observeNonisolated(newcomer.record)  // joins after 5 was queued
            newcomerToken.withLock { $0 = token }
        }
        value.value = 1
        value.value = 6
        #expect(newcomer.values == [5, 6])
        withExtendedLifetime(writer) {}
    }

    @Test("Delivery on a DispatchQueue keeps each observer's order, off the sender's thread")
    func queueDelivery() {
        let queue = DispatchQueue(label: "observer-graph.tests.delivery")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let channel = EventChannel<Int>()
        let onQueue = GraphLock(0)
        let recorder = Recorder<Int>()
        let token = channel.observe(on: queue) { event in
            if DispatchQueue.getSpecific(key: key) == true { onQueue.withLock { $0 += 1 } }
            recorder.record(event)
        }
        for i in 0..<500 { channel.send(i) }
        channel.finish()
        queue.sync {}
        #expect(recorder.values == Array(0..<500))
        #expect(recorder.events.last == .finished)
        #expect(onQueue.withLock { $0 } == 501)
        withExtendedLifetime(token) {}
    }

    @Test("values(): yields current value and changes; breaking out removes the observer")
    func asyncValuesBreak() async {
        let value = ObservableValue(10)
        var seen: [Int] = []
        let writer = Task {
            for i in 11...20 { value.value = i }
        }
        await writer.value
        do {
            for try await v in value.values(bufferingPolicy: .bufferingNewest(1)) {
                seen.append(v)
                if v == 20 { break }
                value.value = 20
            }
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(seen == [20])
        #expect(value.observerCount == 0)
    }

    @Test("values(): .finished ends the loop, .failed throws")
    func asyncTermination() async {
        let channel = EventChannel<Int>()
        let stream = channel.values()
        for i in 1...3 { channel.send(i) }
        channel.finish()
        var collected: [Int] = []
        do {
            for try await v in stream { collected.append(v) }
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(collected == [1, 2, 3])

        let failing = ObservableValue(1)
        let failingStream = failing.values()
        failing.value = 2
        failing.fail(Boom(code: 3))
        var got: [Int] = []
        await #expect(throws: Boom(code: 3)) {
            for try await v in failingStream { got.append(v) }
        }
        #expect(got == [1, 2])
    }

    @Test("values(): cancelling the task removes the observer")
    func asyncCancellation() async {
        let channel = EventChannel<Int>()
        let started = ObservableValue(false)
        let task = Task {
            var count = 0
            do {
                for try await _ in channel.values() {
                    count += 1
                    started.value = true
                }
            } catch {}
            return count
        }
        while channel.observerCount == 0 { await Task.yield() }
        channel.send(1)
        while !started.value { await Task.yield() }
        task.cancel()
        _ = await task.value
        #expect(channel.observerCount == 0)
    }
}

@Suite("Values and channels: ownership")
struct ValueOwnershipTests {
    @Test("Tokens do not keep their source alive; a source that goes away finishes its observers")
    func noCycles() {
        let deinits = Counters()
        weak var weakValue: ObservableValue<Int>?
        let recorder = Recorder<Int>()
        var token: SubscriptionToken?
        do {
            let value = ObservableValue(0)
            weakValue = value
            let payload = Payload(deinits: deinits)
            token = value.observeNonisolated { event in
                _ = payload
                recorder.record(event)
            }
            value.value = 1
        }
        #expect(weakValue == nil)
        // Nothing waits forever on a source that is gone: its observers got `.finished`, and the
        // closure (with what it captured) was released.
        #expect(recorder.events == [.value(0), .value(1), .finished])
        #expect(token?.isCancelled == true)
        #expect(deinits["payload"] == 1)
        token = nil
    }

    @Test("A source that goes away ends each closure observer, in order, and releases every closure")
    func deinitEndsEveryKindOfObserver() {
        let deinits = Counters()
        let log = GraphLock<[String]>([])
        // Each closure holds a payload of its own, and nothing else does.
        func observeValues(_ value: ObservableValue<Int>, _ name: String) -> SubscriptionToken {
            let payload = Payload(deinits: deinits)
            return value.observeValuesNonisolated { v in
                _ = payload
                log.withLock { $0.append("\(name) \(v)") }
            }
        }
        func observeEvents(_ value: ObservableValue<Int>) -> SubscriptionToken {
            let payload = Payload(deinits: deinits)
            return value.observeNonisolated { event in
                _ = payload
                log.withLock { $0.append("events " + (event.value.map { "\($0)" } ?? "\(event)")) }
            }
        }
        var tokens: [SubscriptionToken] = []
        do {
            let value = ObservableValue(0)
            tokens.append(observeValues(value, "first"))
            let gone = observeValues(value, "cancelled")
            tokens.append(observeEvents(value))
            tokens.append(observeValues(value, "last"))
            value.value = 1
            gone.cancel()  // a vacant slot between live ones
            #expect(deinits["payload"] == 1)
            value.value = 2
        }
        // The values-only closures are told nothing more; the event closure gets `.finished`;
        // every observation is over and every closure released.
        #expect(
            log.withLock { $0 } == [
                "first 0", "cancelled 0", "events 0", "last 0",
                "first 1", "cancelled 1", "events 1", "last 1",
                "first 2", "events 2", "last 2",
                "events finished",
            ])
        #expect(tokens.map(\.isCancelled) == [true, true, true])
        #expect(deinits["payload"] == 4)
    }

    @Test("An async loop over a source that is deallocated ends instead of hanging")
    func asyncLoopEndsWhenSourceGoes() async throws {
        var channel: EventChannel<Int>? = EventChannel<Int>()
        let stream = channel!.values()
        channel!.send(7)
        channel = nil
        var got: [Int] = []
        for try await value in stream { got.append(value) }
        #expect(got == [7])
    }

    @Test("A class observer subscribed through an existential is still held weakly")
    func existentialSubscribeIsWeak() {
        let deinits = Counters()
        let first = Subject("A")
        let second = Subject("B")
        do {
            first.addObserver(Watcher("W", deinits: deinits))
            let detached: [any GraphObserver] = [Watcher("X", deinits: deinits)]
            for observer in detached { second.addObserver(observer) }
            #expect(second.observerCount == 1)
            withExtendedLifetime(detached) {}
        }
        #expect(deinits["W"] == 1 && deinits["X"] == 1)
        #expect(second.observerCount == 0)
    }

    @Test("Cancelling and terminating release the closure and what it captured")
    func closuresReleased() {
        let deinits = Counters()
        let channel = EventChannel<Int>()
        var tokens: [SubscriptionToken] = []
        for _ in 0..<2 {
            let payload = Payload(deinits: deinits)
            tokens.append(channel.observeValuesNonisolated { _ in _ = payload })
        }
        tokens[0].cancel()
        #expect(deinits["payload"] == 1)
        channel.finish()
        #expect(deinits["payload"] == 2)
        #expect(tokens.count == 2)
    }

    @Test("A closure may capture the source and its own token's owner without leaking once cancelled")
    func selfCaptureCycleBrokenByCancel() {
        final class Screen: @unchecked Sendable {
            let credits = ObservableValue(0)
            var token: SubscriptionToken?
            let deinits: Counters
            init(deinits: Counters) {
                self.deinits = deinits
                token = credits.observeValuesNonisolated { [self] _ in _ = self.credits }
            }
            deinit { deinits.bump("screen") }
        }
        let deinits = Counters()
        weak var weakScreen: Screen?
        do {
            let screen = Screen(deinits: deinits)
            weakScreen = screen
            screen.token?.cancel()
        }
        #expect(weakScreen == nil)
        #expect(deinits["screen"] == 1)
    }
}
