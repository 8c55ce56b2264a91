// Scenario: a value set from a background thread K times (0, 1, ..., K-1, as a progress or a
// counter is), shown by a closure on the main actor that needs only the latest value. Unit:
// nanoseconds per set = (time from the first set until the main actor has shown the last value)
// / K.
//
// - kit coalesced main-actor closure: `observeValuesCoalesced { }`: at most one call per turn of
//   the main actor, with the value then.
// - kit main-actor closure: `observeValues { }`: one call per set, in order (it shows every
//   value; listed for what coalescing saves).
// - main queue by hand, coalescing (the reference): the thread stores the latest value under a
//   lock and schedules one `DispatchQueue.main.async` unless one is pending; the block takes the
//   latest value (the least a hand-written "latest value on main" does). Its set is a store
//   under a lock, cheaper than an `ObservableValue` set with no observer at all (the floor
//   below), so the kit can only come near it.
// - sets alone (the floor): the same sets of an `ObservableValue` nobody observes, timed until
//   the thread is done.
// Every contender checks that the main actor showed the last value, and values only in the
// order they were set.

import Dispatch
import ObserverGraph

extension ActorDelivery {
    static let valueCoalesced = "kit coalesced main-actor closure"
    static let valueEveryCall = "kit main-actor closure"
    static let valueMainQueue = "main queue by hand, coalescing"
    static let valueFloor = "sets alone, no observer"

    static func valueScenario(_ k: Int) -> String { "actor: value set from a thread K=\(sizeLabel(k))" }

    @MainActor
    static func runValues(plan: Plan, report: Report) async {
        let k = plan.asyncElements
        progress(valueScenario(k))
        var coalesced: [Double] = []
        var everyCall: [Double] = []
        var mainQueue: [Double] = []
        var floor: [Double] = []
        var calls: [Double] = []
        var handCalls: [Double] = []
        for turn in 0..<(plan.asyncSamples + 1) {
            let a = await kitValue(k, coalesced: true)
            let b = await kitValue(k, coalesced: false)
            let c = await mainQueueValue(k)
            let d = await setsAlone(k)
            if turn > 0 {  // the first turn warms up
                coalesced.append(a.nanoseconds)
                calls.append(Double(a.calls))
                everyCall.append(b.nanoseconds)
                mainQueue.append(c.nanoseconds)
                handCalls.append(Double(c.calls))
                floor.append(d)
            }
        }
        let scenario = valueScenario(k)
        report.add(
            scenario: scenario, implementation: valueCoalesced, stats: Stats(coalesced), unit: "ns/set",
            note: "median \(formatValue(Stats(calls).median)) calls")
        report.add(
            scenario: scenario, implementation: valueEveryCall, stats: Stats(everyCall), unit: "ns/set",
            note: "\(k) calls")
        report.add(
            scenario: scenario, implementation: valueMainQueue, stats: Stats(mainQueue), unit: "ns/set",
            reference: true, note: "median \(formatValue(Stats(handCalls).median)) calls")
        report.add(scenario: scenario, implementation: valueFloor, stats: Stats(floor), unit: "ns/set")
    }

    /// What the main actor showed: the values in the order it got them must count up.
    @MainActor
    private final class Shown {
        var last = Int.min  // the first call brings -1, the value before the first set
        var calls = 0
        var ordered = true

        func show(_ value: Int) {
            if value <= last { ordered = false }
            last = value
            calls += 1
        }
    }

    @MainActor
    private static func kitValue(_ k: Int, coalesced: Bool) async -> (nanoseconds: Double, calls: Int) {
        let value = ObservableValue(-1)
        let shown = Shown()
        var done: CheckedContinuation<Void, Never>?
        let show = { (latest: Int) in
            shown.show(latest)
            if latest == k - 1 {
                done?.resume()
                done = nil
            }
        }
        let token = coalesced ? value.observeValuesCoalesced(show) : value.observeValues(show)
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            for i in 0..<k { value.value = i }
        }
        // The main actor runs no call before this suspends, so `done` is set in time.
        await withCheckedContinuation { done = $0 }
        let elapsed = monotonicNanoseconds() - start
        let name = coalesced ? "coalesced closure" : "main-actor closure"
        checkValue(name, last: shown.last, ordered: shown.ordered, k: k)
        if !coalesced {
            verify(shown.calls == k + 1, "actors: value set from a thread, \(name) made \(shown.calls) calls")
        }
        withExtendedLifetime(token) {}
        return (Double(elapsed) / Double(k), shown.calls - 1)  // not the first call, at subscription
    }

    @MainActor
    private static func mainQueueValue(_ k: Int) async -> (nanoseconds: Double, calls: Int) {
        /// The latest value, whether a block is on its way to the main queue, and what the main
        /// queue showed (its last value, its calls, whether in order).
        struct State {
            var latest = -1
            var pending = false
            var last = -1
            var calls = 0
            var ordered = true
            var done: CheckedContinuation<Void, Never>?
        }
        let state = GraphLock(State())
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            state.withLock { $0.done = done }
            DispatchQueue.global().async {
                for i in 0..<k {
                    let schedule = state.withLock { state -> Bool in
                        state.latest = i
                        defer { state.pending = true }
                        return !state.pending
                    }
                    guard schedule else { continue }
                    DispatchQueue.main.async {
                        let finished = state.withLock { state -> CheckedContinuation<Void, Never>? in
                            state.pending = false
                            if state.latest <= state.last { state.ordered = false }
                            state.last = state.latest
                            state.calls += 1
                            return state.last == k - 1 ? state.done.take() : nil
                        }
                        finished?.resume()
                    }
                }
            }
        }
        let elapsed = monotonicNanoseconds() - start
        let (last, ordered, calls) = state.withLock { ($0.last, $0.ordered, $0.calls) }
        checkValue("main queue", last: last, ordered: ordered, k: k)
        return (Double(elapsed) / Double(k), calls)
    }

    @MainActor
    private static func setsAlone(_ k: Int) async -> Double {
        let value = ObservableValue(-1)
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                for i in 0..<k { value.value = i }
                done.resume()
            }
        }
        let elapsed = monotonicNanoseconds() - start
        checkValue("sets alone", last: value.value, ordered: true, k: k)
        return Double(elapsed) / Double(k)
    }

    private static func checkValue(_ what: String, last: Int, ordered: Bool, k: Int) {
        verify(
            last == k - 1 && ordered,
            "actors: value set from a thread, \(what) ended with \(last) (expected \(k - 1)), in order: \(ordered)"
        )
    }

    // MARK: - Targets

    static let maxRatioValueCoalescedToHand = 1.0
    static let maxRatioValueCoalescedToEveryCall = 0.5

    static func evaluateValues(_ report: Report, plan: Plan) {
        let scenario = valueScenario(plan.asyncElements)
        guard let kit = report.median(scenario, valueCoalesced),
            let queue = report.median(scenario, valueMainQueue)
        else { return }
        var measured =
            "\(formatValue(kit)) ns / main queue \(formatValue(queue)) ns = \(formatRatio(kit / queue))"
        if let everyCall = report.median(scenario, valueEveryCall) {
            measured += "; observeValues (every value) \(formatValue(everyCall)) ns"
        }
        if let floor = report.median(scenario, valueFloor) {
            measured += "; sets alone \(formatValue(floor)) ns (\(formatRatio(kit / floor)) of it)"
        }
        report.addTarget(
            TargetRow(
                target:
                    "value set from a thread, coalesced main-actor closure <= \(formatRatio(maxRatioValueCoalescedToHand)) the main queue by hand, coalescing",
                status: kit / queue <= maxRatioValueCoalescedToHand ? .met : .missed,
                measured: measured))
        if let everyCall = report.median(scenario, valueEveryCall) {
            report.addTarget(
                TargetRow(
                    target:
                        "value set from a thread, coalesced main-actor closure <= \(formatRatio(maxRatioValueCoalescedToEveryCall)) observeValues (every value)",
                    status: kit / everyCall <= maxRatioValueCoalescedToEveryCall ? .met : .missed,
                    measured:
                        "\(formatValue(kit)) ns / \(formatValue(everyCall)) ns = \(formatRatio(kit / everyCall))"
                ))
        }
    }
}
