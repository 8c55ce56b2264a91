import Dispatch
import Foundation
import ObserverGraph
import Testing

/// What a coalesced observer of a value on the main actor received: every call's value, in
/// order, the terminal events, and the calls made off the main queue.
@MainActor
final class CoalescedValueLog {
    var values: [Int] = []
    var terminals: [String] = []
    var offMainQueue = 0

    func record(_ value: Int) {
        if !isOnMainQueue() { offMainQueue += 1 }
        values.append(value)
    }

    func record(_ event: GraphEvent<Int>) {
        switch event {
        case .value(let value): record(value)
        case .finished: terminals.append("finished")
        case .failed(let error): terminals.append("failed: \(error)")
        }
    }

    /// Each call's value is newer than the one before (the sets below only count up).
    var isIncreasing: Bool { zip(values, values.dropFirst()).allSatisfy { $0 < $1 } }
}

/// An error that holds something whose release a test counts.
struct PayloadError: Error {
    let payload: Payload
}

/// Sets a value from its own actor.
actor ValueSetter {
    func count(_ value: ObservableValue<Int>, to last: Int) {
        for next in 1...last { value.value = next }
    }
}

/// The example of `observeValuesCoalesced(isolation:_:)`'s documentation.
@MainActor final class ProgressViewModel {
    private(set) var percent = 0.0
    private var token: SubscriptionToken?
    init(progress: ObservableValue<Double>) {
        token = progress.observeValuesCoalesced { [weak self] fraction in
            self?.percent = fraction * 100
        }
    }
}

@MainActor
@Suite("Observable values: coalesced observation on an actor")
struct ObservableValueCoalescedTests {
    @Test("the first call, before observeValuesCoalesced returns, has the current value")
    func firstCallIsTheCurrentValue() {
        let value = ObservableValue(5)
        let log = CoalescedValueLog()
        let token = value.observeValuesCoalesced { log.record($0) }
        #expect(log.values == [5])
        token.cancel()
    }

    @Test("sets made in one turn of the actor make one call, with the last value, on a later turn")
    func oneTurnOneCall() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let token = value.observeValuesCoalesced { log.record($0) }
        value.value = 1
        value.set(2)
        value.update { $0 += 1 }
        #expect(log.values == [0])  // not inside the calls that set it
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 2 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [0, 3])
        value.value = 4
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 3 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [0, 3, 4])
        #expect(log.offMainQueue == 0)
        token.cancel()
    }

    @Test("a set of an equal value counts; with skipsEqualValues it makes no call")
    func equalValues() async {
        let plain = ObservableValue(7)
        let skipping = ObservableValue(7, skipsEqualValues: true)
        let plainLog = CoalescedValueLog()
        let skippingLog = CoalescedValueLog()
        let tokens = [
            plain.observeValuesCoalesced { plainLog.record($0) },
            skipping.observeValuesCoalesced { skippingLog.record($0) },
        ]
        plain.value = 7
        skipping.value = 7
        #expect(await eventually(within: coalescedCallLimit) { plainLog.values.count == 2 })
        for _ in 0..<20 { await Task.yield() }
        #expect(plainLog.values == [7, 7])
        #expect(skippingLog.values == [7])
        skipping.value = 8
        #expect(await eventually(within: coalescedCallLimit) { skippingLog.values.count == 2 })
        #expect(skippingLog.values == [7, 8])
        for token in tokens { token.cancel() }
    }

    @Test("64,000 sets from another actor: fewer calls, each newer than the last, ending with the last value")
    func setsFromAnotherActor() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let token = value.observeValuesCoalesced { log.record($0) }
        await ValueSetter().count(value, to: 64_000)
        #expect(await eventually(within: coalescedCallLimit) { log.values.last == 64_000 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values.first == 0)
        #expect(log.values.last == 64_000)
        #expect(log.isIncreasing)
        #expect(log.offMainQueue == 0)
        token.cancel()
    }

    @Test("updates from two threads at once: none lost, the calls in the order of the sets")
    func updatesFromThreads() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let token = value.observeValuesCoalesced { log.record($0) }
        await Task.detached {
            race(threads: 2) { _ in
                for _ in 0..<5_000 { value.update { $0 += 1 } }
            }
        }.value
        #expect(value.value == 10_000)
        #expect(await eventually(within: coalescedCallLimit) { log.values.last == 10_000 })
        #expect(log.isIncreasing)
        token.cancel()
    }

    /// A call that runs while a set is committed but its event has not reached the observer yet
    /// (an observer before it holds that delivery) delivers the latest value it received, and
    /// does not wait: the held set comes in the next call, once its delivery reaches it.
    @Test("a call that runs while a set is still on its way delivers the value before it; the set comes next")
    func callDuringASetOnItsWay() async {
        let value = ObservableValue(1)
        // Held until opened: a loaded run (the thread sanitizer, every suite at once) can keep
        // the main actor from its next turn for minutes (220 s was seen).
        let gate = HoldGate(holding: 3, limit: 300)
        // Registered first, so it gets each event before the coalescing observer does.
        let holder = value.observeValuesNonisolated { gate.hold($0) }
        let log = CoalescedValueLog()
        let token = value.observeValuesCoalesced { log.record($0) }
        let sets = BackgroundCall {
            value.value = 2  // reaches the coalescing observer: a call is scheduled
            value.value = 3  // committed, then held before it reaches the coalescing observer
        }
        #expect(gate.waitUntilHeld())
        // The call runs while 3 is held: it brings 2, which is all it has received.
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 2 })
        #expect(log.values == [1, 2])
        #expect(value.value == 3)
        gate.open()
        #expect(sets.returned(within: 10))
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 3 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [1, 2, 3])
        withExtendedLifetime((holder, token)) {}
    }

    @Test("the events form ends with .finished after the last value; a late observer gets .finished only")
    func terminalEventComesLast() async {
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value.observeCoalesced { log.record($0) }
        value.value = 2
        value.value = 3
        value.finish()
        #expect(await eventually(within: coalescedCallLimit) { log.terminals.count == 1 })
        #expect(log.values == [1, 3])
        #expect(log.terminals == ["finished"])
        #expect(token.isCancelled)
        let late = CoalescedValueLog()
        let lateToken = value.observeCoalesced { late.record($0) }
        #expect(late.values.isEmpty && late.terminals == ["finished"])
        #expect(lateToken.isCancelled)
        // The values form of a finished value makes no call.
        let silent = CoalescedValueLog()
        let silentToken = value.observeValuesCoalesced { silent.record($0) }
        #expect(silent.values.isEmpty)
        #expect(silentToken.isCancelled)
    }

    @Test("a failure's error is released once the events form has delivered it, with the token kept")
    func failureReleasedAfterDelivery() async {
        let deinits = Counters()
        var value: ObservableValue<Int>? = ObservableValue(1)
        weak var weakValue: ObservableValue<Int>?
        weakValue = value
        let log = CoalescedValueLog()
        let token = value!.observeCoalesced { log.record($0) }
        value!.fail(PayloadError(payload: Payload(deinits: deinits)))
        #expect(await eventually(within: coalescedCallLimit) { log.terminals.count == 1 })
        #expect(token.isCancelled)
        value = nil
        #expect(await eventually(within: coalescedCallLimit) { weakValue == nil })
        // Found by a review: the observation kept the error until its token went.
        #expect(await eventually(within: coalescedCallLimit) { deinits["payload"] == 1 })
        withExtendedLifetime(token) {}
    }

    @Test("a failure's error is released by a cancel made before its call")
    func failureReleasedByCancel() async {
        let deinits = Counters()
        var value: ObservableValue<Int>? = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value!.observeCoalesced { log.record($0) }
        value!.fail(PayloadError(payload: Payload(deinits: deinits)))
        value = nil  // the value's own reference to the error goes
        token.cancel()  // before the call, on this actor
        #expect(deinits["payload"] == 1)
        for _ in 0..<20 { await Task.yield() }
        #expect(log.terminals.isEmpty)
    }

    /// A call that waited for a thread of the shared pool before hopping to the actor would show
    /// no progress while workers hold every thread of that pool (found by a review: the second
    /// call came 2 s later, when the workers were done). The workers stop when the closure has
    /// been called 3 times; nothing on this side waits for the pool (a `Task.sleep` would).
    @Test("calls reach the main actor while every thread of the shared pool is busy")
    func callsWhileThePoolIsBusy() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let release = GraphLock(false)
        let token = value.observeValuesCoalesced { latest in
            log.record(latest)
            if log.values.count == 3 { release.withLock { $0 = true } }
        }
        let released = await holdThePool(release: release) { step in value.value = step }
        // Each worker counts its 60 s from when it starts: the pool may be slow to start them (the
        // thread sanitizer's run of the suite took 77 s), which says nothing of the calls.
        #expect(released, "no 3 calls in 60 s while the workers held the pool")
        #expect(log.isIncreasing)
        token.cancel()
    }

    @Test("a value that goes away ends the events form with .finished, after its last set")
    func valueDeinitFinishes() async {
        var value: ObservableValue<Int>? = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value!.observeCoalesced { log.record($0) }
        value!.value = 2
        value = nil
        #expect(await eventually(within: coalescedCallLimit) { log.terminals.count == 1 })
        #expect(log.values == [1, 2])
        #expect(log.terminals == ["finished"])
        #expect(token.isCancelled)
    }

    @Test("cancelled on the actor with a call scheduled: no call after cancel returns, the closure released")
    func cancelBeforeTheCall() async {
        let value = ObservableValue(1)
        let deinits = Counters()
        let log = CoalescedValueLog()
        var payload: Payload? = Payload(deinits: deinits)
        let token = value.observeValuesCoalesced { [payload] in
            _ = payload
            log.record($0)
        }
        payload = nil
        value.value = 2
        token.cancel()
        #expect(deinits["payload"] == 1)
        for _ in 0..<20 { await Task.yield() }
        value.value = 3
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [1])
        #expect(value.observers.isEmpty)
    }

    @Test("cancel from inside the closure: no later call; a set made by the closure comes on a later call")
    func cancelAndSetInsideTheClosure() async {
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        var token: SubscriptionToken?
        token = value.observeValuesCoalesced { current in
            log.record(current)
            if current == 2 { value.value = 3 }  // lands after this call
            if current == 3 { token?.cancel() }
        }
        value.value = 2
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 3 })
        value.value = 4
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [1, 2, 3])
        #expect(token?.isCancelled == true)
    }

    @Test("the observation holds neither its actor nor the value; the closure goes with the actor's token")
    func lifetimes() async {
        let deinits = Counters()
        weak var weakCollector: CoalescedValueCollector?
        weak var weakValue: ObservableValue<Int>?
        var value: ObservableValue<Int>? = ObservableValue(1)
        weakValue = value
        do {
            let collector = CoalescedValueCollector()
            weakCollector = collector
            await collector.start(value!, payload: Payload(deinits: deinits))
            value!.value = 5
            let counts = collector.counts
            #expect(await eventually(within: coalescedCallLimit) { counts["latest"] == 5 })
            #expect(counts["off the actor"] == 0)
        }
        #expect(await eventually(within: coalescedCallLimit) { weakCollector == nil })
        #expect(await eventually(within: coalescedCallLimit) { deinits["payload"] == 1 })
        #expect(await eventually(within: coalescedCallLimit) { value!.observers.isEmpty })
        value = nil
        #expect(weakValue == nil)
    }

    @Test("taken out of the observer list, a coalesced observation ends; put back, it makes no call")
    func removedFromTheListEnds() async {
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value.observeCoalesced { log.record($0) }
        let removed = value.removeAllObservers()
        #expect(removed.count == 1)
        #expect(token.isCancelled)
        value.value = 2
        for observer in removed { value.addObserver(observer) }
        value.value = 3
        try? await Task.sleep(for: .milliseconds(50))
        #expect(log.values == [1])
        #expect(log.terminals == [])
    }

    @Test("an ObservableState observed coalesced: the current value, the last of a turn, then .finished")
    func observableState() async {
        let state = ObservableState(10)
        let log = CoalescedValueLog()
        let events = CoalescedValueLog()
        let tokens = [
            state.observeValuesCoalesced { log.record($0) },
            state.observeCoalesced { events.record($0) },
        ]
        state.value = 11
        state.value = 12
        #expect(
            await eventually(within: coalescedCallLimit) { log.values.count == 2 && events.values.count == 2 }
        )
        state.finish()
        #expect(await eventually(within: coalescedCallLimit) { events.terminals.count == 1 })
        #expect(log.values == [10, 12])
        #expect(events.values == [10, 12])
        #expect(events.terminals == ["finished"])
        withExtendedLifetime(tokens) {}
    }

    @Test("the documentation's view model shows the latest progress")
    func documentationExample() async {
        let progress = ObservableValue(0.0)
        let model = ProgressViewModel(progress: progress)
        #expect(model.percent == 0)
        await Task.detached {
            for step in 1...1_000 { progress.value = Double(step) / 1_000 }
        }.value
        #expect(await eventually(within: coalescedCallLimit) { model.percent == 100 })
    }
}

/// A custom actor that keeps its coalesced observation's token, with something captured.
actor CoalescedValueCollector {
    let counts = Counters()
    private var token: SubscriptionToken?

    func start(_ value: ObservableValue<Int>, payload: Payload) {
        // Holds itself weakly, so that it can go while the observation lasts (its token goes
        // with it, and the closure is never called after).
        token = value.observeValuesCoalesced { [counts, weak self] latest in
            _ = payload
            self?.assertIsolated()  // a trap in the debug builds the tests run in
            counts.bump("latest", by: latest - counts["latest"])
        }
    }
}
