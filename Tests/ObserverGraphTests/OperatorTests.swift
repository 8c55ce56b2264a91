import Dispatch
import ObserverGraph
import Testing

/// Records what a source delivers to a nonisolated observer; keeps the token.
final class OperatorRecorder<Value: Sendable>: Sendable {
    private let state = GraphLock<[GraphEvent<Value>]>([])
    private let token = GraphLock<SubscriptionToken?>(nil)

    init(_ source: some ObservableSource<Value>) {
        let observed: SubscriptionToken
        if let derived = source as? DerivedValue<Value> {
            observed = derived.observeNonisolated { [state] event in state.withLock { $0.append(event) } }
        } else if let root = source as? GraphEventSource<Value> {
            observed = root.observeNonisolated { [state] event in state.withLock { $0.append(event) } }
        } else {
            preconditionFailure("unknown source")
        }
        token.withLock { $0 = observed }
    }

    var events: [GraphEvent<Value>] { state.withLock { $0 } }
    var values: [Value] { events.compactMap(\.value) }
    func cancel() { token.withLock { $0 }?.cancel() }
}

struct OperatorFailure: Error, Equatable {}

@Suite("Operators: values, termination, read-only derived values")
struct OperatorTests {
    @Test("map on a value: starts from the current value, follows every set, finishes with it")
    func mapValue() {
        let x = ObservableValue(1)
        let doubled = x.map { $0 * 2 }
        #expect(doubled.value == 2)
        let recorder = OperatorRecorder(doubled)
        x.value = 5
        x.value = 7
        x.finish()
        #expect(recorder.events == [.value(2), .value(10), .value(14), .finished])
        #expect(doubled.terminalEvent == .finished)
    }

    @Test("map on a channel replays nothing and fails when the channel fails")
    func mapChannel() {
        let taps = EventChannel<Int>()
        let labels = taps.map { "tap \($0)" }
        #expect(labels.value == nil)
        let recorder = OperatorRecorder(labels)
        taps.send(1)
        taps.send(2)
        taps.fail(OperatorFailure())
        taps.send(3)
        #expect(recorder.events == [.value("tap 1"), .value("tap 2"), .failed(OperatorFailure())])
    }

    @Test("compactMap, filter, removeDuplicates, scan, prepend")
    func transforms() {
        let x = EventChannel<Int>()
        let compact = OperatorRecorder(x.compactMap { $0 % 2 == 0 ? "\($0)" : nil })
        let evens = OperatorRecorder(x.filter { $0 % 2 == 0 })
        let distinct = OperatorRecorder(x.removeDuplicates())
        let sums = OperatorRecorder(x.scan(0) { $0 + $1 })
        let started = x.prepend(0)
        #expect(started.value == 0)
        let prepended = OperatorRecorder(started)
        for value in [1, 1, 2, 2, 3] { x.send(value) }
        x.finish()
        #expect(compact.events == [.value("2"), .value("2"), .finished])
        #expect(evens.events == [.value(2), .value(2), .finished])
        #expect(distinct.events == [.value(1), .value(2), .value(3), .finished])
        #expect(sums.events == [.value(1), .value(2), .value(4), .value(6), .value(9), .finished])
        #expect(
            prepended.events == [.value(0), .value(1), .value(1), .value(2), .value(2), .value(3), .finished])
    }

    @Test("removeDuplicates(by:) compares with the last value passed on")
    func removeDuplicatesBy() {
        let x = ObservableValue(10)
        let tens = OperatorRecorder(x.removeDuplicates { $0 / 10 == $1 / 10 })
        for value in [11, 19, 20, 25, 31] { x.value = value }
        #expect(tens.values == [10, 20, 31])
    }

    @Test("removeDuplicates(by:) compares with the last value passed on, not the last value seen")
    func removeDuplicatesByComparesWithTheLastPassedOn() {
        // "Closer than 5" is not transitive: 3, 6, 9, 12 are each close to the one before, but
        // 6 is not close to 0, nor 12 to 6.
        let x = ObservableValue(0)
        let recorder = OperatorRecorder(x.removeDuplicates { abs($0 - $1) < 5 })
        for value in [3, 6, 9, 12] { x.value = value }
        #expect(recorder.values == [0, 6, 12])
    }

    @Test("Chains compose: operators on a derived value")
    func chains() {
        let x = ObservableValue(0)
        let chain = x.map { $0 + 1 }.filter { $0 % 2 == 0 }.removeDuplicates().scan(0) { $0 + $1 }
        let recorder = OperatorRecorder(chain)
        for value in 1...6 { x.value = value }
        // map: 1 2 3 4 5 6 7 → filter: 2 4 6 → scan: 2 6 12
        #expect(recorder.values == [2, 6, 12])
        #expect(chain.value == 12)
    }

    @Test("A failing upstream fails map's output; later sets are ignored")
    func failurePropagates() {
        let x = ObservableValue(1)
        let chain = x.map { $0 * 3 }.map { "\($0)" }
        let recorder = OperatorRecorder(chain)
        x.fail(OperatorFailure())
        x.value = 9
        #expect(recorder.events == [.value("3"), .failed(OperatorFailure())])
        // A late observer receives the terminal event at once.
        let late = OperatorRecorder(chain)
        #expect(late.events == [.failed(OperatorFailure())])
    }

    @Test("Cancelling a token stops delivery")
    func cancellation() {
        let x = EventChannel<Int>()
        let mapped = x.map { $0 }
        let recorder = OperatorRecorder(mapped)
        x.send(1)
        recorder.cancel()
        x.send(2)
        #expect(recorder.events == [.value(1)])
    }

    @Test("combineLatest waits for both, then combines the latest; finishes when both finished")
    func combineLatest() {
        let a = EventChannel<Int>()
        let b = EventChannel<String>()
        let both = a.combineLatest(b).map { "\($0)\($1)" }
        let recorder = OperatorRecorder(both)
        a.send(1)
        b.send("x")
        a.send(2)
        b.send("y")
        a.finish()
        b.send("z")
        #expect(recorder.events == [.value("1x"), .value("2x"), .value("2y"), .value("2z")])
        b.finish()
        #expect(recorder.events.last == .finished)
    }

    @Test("combineLatest of three values starts combined and fails when one input fails")
    func combineLatest3() {
        let a = ObservableValue(1)
        let b = ObservableValue(2)
        let c = ObservableValue(3)
        let sum = a.combineLatest(b, c).map { $0 + $1 + $2 }
        #expect(sum.value == 6)
        let recorder = OperatorRecorder(sum)
        b.value = 20
        c.fail(OperatorFailure())
        #expect(recorder.events == [.value(6), .value(24), .failed(OperatorFailure())])
    }

    @Test("merge interleaves, finishes when all inputs finished, fails on the first failure")
    func merge() {
        let a = EventChannel<Int>()
        let b = EventChannel<Int>()
        let merged = OperatorRecorder(a.merge(b))
        a.send(1)
        b.send(2)
        a.finish()
        b.send(3)
        b.finish()
        #expect(merged.events == [.value(1), .value(2), .value(3), .finished])
        let c = EventChannel<Int>()
        let d = EventChannel<Int>()
        let failing = OperatorRecorder(c.merge(d))
        c.fail(OperatorFailure())
        d.send(1)
        #expect(failing.events == [.failed(OperatorFailure())])
    }

    @Test("flatMapLatest follows the latest inner source; a replaced one never passes")
    func flatMapLatest() {
        let useB = ObservableValue(false)
        let a = ObservableValue(1)
        let b = EventChannel<Int>()
        let followed = useB.flatMapLatest { useB -> DerivedValue<Int> in useB ? b.map { $0 } : a.map { $0 } }
        let recorder = OperatorRecorder(followed)
        a.value = 2
        useB.value = true
        a.value = 3  // replaced: does not pass
        b.send(10)
        useB.value = false  // back to a: its current value passes at once
        b.send(11)
        #expect(recorder.values == [1, 2, 10, 3])
    }

    @Test("flatMapLatest lets go of the inner source it replaced: no edge left on it")
    func flatMapLatestDetachesReplacedInner() {
        let gps = ObservableValue(1)
        let manual = ObservableValue(100)
        let useGPS = ObservableValue(true)
        let location = useGPS.flatMapLatest { $0 ? gps : manual }
        let recorder = OperatorRecorder(location)
        #expect(GraphSnapshot(observables: [gps]).edges.count == 1)
        useGPS.value = false
        // A replaced source that kept its edge would run it on each of its events, for nothing,
        // and gain one more each time it is switched to again.
        #expect(GraphSnapshot(observables: [gps]).edges.isEmpty)
        #expect(GraphSnapshot(observables: [manual]).edges.count == 1)
        for _ in 0..<3 {
            useGPS.value = true
            useGPS.value = false
        }
        #expect(GraphSnapshot(observables: [gps]).edges.isEmpty)
        gps.value = 2
        manual.value = 101
        #expect(recorder.values == [1, 100, 1, 100, 1, 100, 1, 100, 101])
    }

    @Test("merge has a current value only when every input has one: with a channel, new observers wait")
    func mergeWithAChannelReplaysNothing() {
        let value = ObservableValue(1)
        let channel = EventChannel<Int>()
        let merged = value.merge(channel)
        let first = OperatorRecorder(merged)
        #expect(first.values.isEmpty)
        value.value = 2
        channel.send(5)
        #expect(first.values == [2, 5])
        let late = OperatorRecorder(merged)
        #expect(late.values.isEmpty)
        // Made a value first, the channel lets the merge start with the value's current value.
        let started = OperatorRecorder(value.merge(channel.prepend(value.value)))
        #expect(started.values == [2])
        let both = OperatorRecorder(value.merge(ObservableValue(10)))
        #expect(both.values == [10])
    }

    @Test("flatMapLatest finishes when the outer and the current inner finished; fails with either")
    func flatMapLatestTermination() {
        let outer = EventChannel<Int>()
        let inner = EventChannel<Int>()
        let recorder = OperatorRecorder(outer.flatMapLatest { _ in inner })
        outer.send(0)
        inner.send(1)
        outer.finish()
        inner.send(2)
        #expect(recorder.events == [.value(1), .value(2)])
        inner.finish()
        #expect(recorder.events == [.value(1), .value(2), .finished])

        let outer2 = EventChannel<Int>()
        let inner2 = EventChannel<Int>()
        let failing = OperatorRecorder(outer2.flatMapLatest { _ in inner2 })
        outer2.send(0)
        inner2.fail(OperatorFailure())
        #expect(failing.events == [.failed(OperatorFailure())])
    }

    @Test("switchToLatest releases the replaced inner source")
    func switchToLatestReleases() {
        weak var weakFirst: ObservableValue<Int>?
        let outer = ObservableValue<ObservableValue<Int>>(ObservableValue(0))
        let switched = outer.switchToLatest()
        do {
            let first = ObservableValue(1)
            weakFirst = first
            outer.value = first
        }
        #expect(switched.value == 1)
        weakFirst?.value = 3
        #expect(switched.value == 3)
        outer.value = ObservableValue(2)
        #expect(switched.value == 2)
        #expect(weakFirst == nil)
    }

    @Test("Operators on an ObservableArray: one change, one derived value")
    func arrayOperators() {
        let names = ObservableArray(["Steve", "Tim"])
        let count = names.map { $0.array.count }.removeDuplicates()
        let recorder = OperatorRecorder(count)
        names.append("John")
        names[0] = "Mark"  // same count: removed as a duplicate
        #expect(recorder.values == [2, 3])
    }

    @Test("A derived value is read-only and iterates with values()")
    func valuesSequence() async throws {
        let x = ObservableValue(1)
        let mapped = x.map { $0 * 10 }
        let stream = mapped.values()
        x.value = 2
        x.finish()
        var seen: [Int] = []
        for try await value in stream { seen.append(value) }
        #expect(seen == [10, 20])
    }

    @Test("A derived value observed on an actor and on a queue")
    @MainActor
    func actorAndQueue() async {
        let x = ObservableValue(1)
        let mapped = x.map { $0 + 100 }
        var onMain: [Int] = []
        let token = mapped.observeValues { onMain.append($0) }
        let queued = GraphLock<[Int]>([])
        let queue = DispatchQueue(label: "operator-tests")
        let queueToken = mapped.observeValues(on: queue) { value in queued.withLock { $0.append(value) } }
        x.value = 2
        for _ in 0..<200 where onMain.count < 2 || queued.withLock({ $0.count }) < 2 {
            try? await Task.sleep(for: .milliseconds(5))
        }
        #expect(onMain == [101, 102])
        #expect(queued.withLock { $0 } == [101, 102])
        withExtendedLifetime((token, queueToken)) {}
    }
}
