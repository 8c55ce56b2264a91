import ObserverGraph
import Testing

/// Sets a value from its own actor (for a chain observed on the main actor).
actor DerivedSetter {
    func count(_ value: ObservableValue<Int>, to last: Int) {
        for next in 1...last { value.value = next }
    }
}

/// The example of `DerivedValue.observeValuesCoalesced(isolation:_:)`'s documentation.
@MainActor final class StatusLine {
    private(set) var text = ""
    private var token: SubscriptionToken?
    init(progress: ObservableValue<Double>) {
        token = progress.map { "\(Int($0 * 100)) %" }.removeDuplicates()
            .observeValuesCoalesced { [weak self] in self?.text = $0 }
    }
}

@MainActor
@Suite("Derived values: coalesced observation on an actor")
struct DerivedValueCoalescedTests {
    @Test("the first call, before observeValuesCoalesced returns, has the derived value")
    func firstCallIsTheLatestValue() {
        let value = ObservableValue(5)
        let log = CoalescedValueLog()
        let token = value.map { $0 * 10 }.observeValuesCoalesced { log.record($0) }
        #expect(log.values == [50])
        token.cancel()
    }

    @Test("changes made in one turn make one call, with the last value through the chain, on a later turn")
    func oneTurnOneCall() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let token = value.map { $0 + 100 }.observeValuesCoalesced { log.record($0) }
        value.value = 1
        value.value = 2
        value.update { $0 += 1 }
        #expect(log.values == [100])  // not inside the sets
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 2 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [100, 103])
        value.value = 4
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 3 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [100, 103, 104])
        #expect(log.offMainQueue == 0)
        token.cancel()
    }

    @Test("a filter that let no value through makes no first call; the first value that passes makes one")
    func noValueYet() async {
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value.filter { $0 % 2 == 0 }.observeValuesCoalesced { log.record($0) }
        #expect(log.values.isEmpty)
        value.value = 3
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values.isEmpty)
        value.value = 4
        value.value = 5  // filtered out: the call keeps 4
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 1 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [4])
        token.cancel()
    }

    @Test("a value derived from an event channel: no first call, then the latest event of each turn")
    func fromAnEventChannel() async {
        let channel = EventChannel<Int>()
        let log = CoalescedValueLog()
        let token = channel.map { $0 * 2 }.observeValuesCoalesced { log.record($0) }
        #expect(log.values.isEmpty)
        channel.send(1)
        channel.send(2)
        channel.send(3)
        #expect(await eventually(within: coalescedCallLimit) { log.values.count == 1 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [6])
        token.cancel()
    }

    @Test("64,000 sets from another actor through map and removeDuplicates: calls ending with the last")
    func setsFromAnotherActor() async {
        let value = ObservableValue(0)
        let log = CoalescedValueLog()
        let token = value.map { $0 / 2 }.removeDuplicates().observeValuesCoalesced { log.record($0) }
        await DerivedSetter().count(value, to: 64_000)
        #expect(await eventually(within: coalescedCallLimit) { log.values.last == 32_000 })
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values.first == 0)
        #expect(log.values.last == 32_000)
        #expect(log.values.count <= 32_001)
        #expect(log.isIncreasing)
        #expect(log.offMainQueue == 0)
        token.cancel()
    }

    @Test("the events form ends with .finished after the last value; a late observer gets .finished only")
    func terminalEventComesLast() async {
        let value = ObservableValue(1)
        let derived = value.map { $0 * 3 }
        let log = CoalescedValueLog()
        let token = derived.observeCoalesced { log.record($0) }
        value.value = 2
        value.value = 3
        value.finish()
        #expect(await eventually(within: coalescedCallLimit) { log.terminals.count == 1 })
        #expect(log.values == [3, 9])
        #expect(log.terminals == ["finished"])
        let late = CoalescedValueLog()
        let lateToken = derived.observeCoalesced { late.record($0) }
        #expect(late.values.isEmpty && late.terminals == ["finished"])
        #expect(lateToken.isCancelled)
        let silent = CoalescedValueLog()
        let silentToken = derived.observeValuesCoalesced { silent.record($0) }
        #expect(silent.values.isEmpty)
        #expect(silentToken.isCancelled)
        withExtendedLifetime(token) {}
    }

    @Test("the token keeps the chain alive; once cancelled, the chain and the closure go")
    func tokenKeepsTheChain() async {
        let deinits = Counters()
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        weak var weakDerived: DerivedValue<Int>?
        var payload: Payload? = Payload(deinits: deinits)
        let token: SubscriptionToken
        do {
            let derived = value.map { $0 + 1 }
            weakDerived = derived
            token = derived.observeValuesCoalesced { [payload] in
                _ = payload
                log.record($0)
            }
        }
        payload = nil
        #expect(weakDerived != nil)
        value.value = 5
        #expect(await eventually(within: coalescedCallLimit) { log.values == [2, 6] })
        token.cancel()
        #expect(deinits["payload"] == 1)
        #expect(weakDerived == nil)
        value.value = 7
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [2, 6])
    }

    @Test("cancelled on the actor with a call scheduled: no call after cancel returns")
    func cancelBeforeTheCall() async {
        let value = ObservableValue(1)
        let log = CoalescedValueLog()
        let token = value.map { $0 }.observeValuesCoalesced { log.record($0) }
        value.value = 2
        token.cancel()
        for _ in 0..<20 { await Task.yield() }
        value.value = 3
        for _ in 0..<20 { await Task.yield() }
        #expect(log.values == [1])
    }

    @Test("the documentation's status line shows the latest text")
    func documentationExample() async {
        let progress = ObservableValue(0.25)
        let line = StatusLine(progress: progress)
        #expect(line.text == "25 %")
        progress.value = 0.5
        progress.value = 0.75
        #expect(await eventually(within: coalescedCallLimit) { line.text == "75 %" })
    }
}
