// Scenario: an array filled from a background thread, one element at a time, shown by a
// closure on the main actor that keeps the array it is given (as a view model does). Unit:
// nanoseconds per append = (time from the first append until the main actor holds the whole
// array) / K.
//
// - kit coalesced main-actor closure: `observeValuesCoalesced { }`: at most one call per turn of
//   the main actor, with the array then and the changes composed.
// - kit main-actor closure: `observeValues { }`: one call per append, each event holding its
//   array until the main actor runs it, so an append made meanwhile copies the array (O(n)).
// - main queue by hand (the reference): the thread appends to its own array and sends each
//   element to the main queue (`DispatchQueue.main.async`), which appends it to its copy.
// - AsyncStream by hand: the thread appends to its own array and yields each element; a
//   `for await` loop on the main actor appends it to the main actor's copy.
// - appends alone (the floor): the same appends to an `ObservableArray` nobody observes, timed
//   until the thread is done.
// Every contender checks that the main actor ends with exactly 0..<K.

import Dispatch
import ObserverGraph

extension ActorDelivery {
    static let kitCoalesced = "kit coalesced main-actor closure"
    static let kitArrayMain = "kit main-actor closure"
    static let arrayMainQueue = "main queue by hand"
    static let arrayStream = "AsyncStream by hand"
    static let arrayFloor = "appends alone, no observer"

    static func arrayScenario(_ k: Int) -> String { "actor: array filled from a thread K=\(sizeLabel(k))" }

    @MainActor
    static func runArrays(plan: Plan, report: Report) async {
        let k = plan.actorArrayAppends
        progress(arrayScenario(k))
        var coalesced: [Double] = []
        var perEvent: [Double] = []
        var mainQueue: [Double] = []
        var stream: [Double] = []
        var floor: [Double] = []
        for turn in 0..<(plan.asyncSamples + 1) {
            let a = await kitArray(k, coalesced: true)
            let b = await kitArray(k, coalesced: false)
            let c = await streamArray(k)
            let d = await appendsAlone(k)
            let e = await mainQueueArray(k)
            if turn > 0 {  // the first turn warms up
                coalesced.append(a)
                perEvent.append(b)
                stream.append(c)
                floor.append(d)
                mainQueue.append(e)
            }
        }
        let scenario = arrayScenario(k)
        report.add(
            scenario: scenario, implementation: kitCoalesced, stats: Stats(coalesced), unit: "ns/append")
        report.add(
            scenario: scenario, implementation: kitArrayMain, stats: Stats(perEvent), unit: "ns/append")
        report.add(
            scenario: scenario, implementation: arrayMainQueue, stats: Stats(mainQueue), unit: "ns/append",
            reference: true)
        report.add(scenario: scenario, implementation: arrayStream, stats: Stats(stream), unit: "ns/append")
        report.add(scenario: scenario, implementation: arrayFloor, stats: Stats(floor), unit: "ns/append")
    }

    @MainActor
    private static func kitArray(_ k: Int, coalesced: Bool) async -> Double {
        let items = ObservableArray<Int>()
        var shown: [Int] = []
        var done: CheckedContinuation<Void, Never>?
        let show = { (change: ArrayChange<Int>) in
            shown = change.array
            if shown.count == k {
                done?.resume()
                done = nil
            }
        }
        let token = coalesced ? items.observeValuesCoalesced(show) : items.observeValues(show)
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            for i in 0..<k { items.append(i) }
        }
        // The main actor runs no call before this suspends, so `done` is set in time.
        await withCheckedContinuation { done = $0 }
        let elapsed = monotonicNanoseconds() - start
        checkArray(coalesced ? "coalesced closure" : "main-actor closure", shown, k: k)
        withExtendedLifetime(token) {}
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func streamArray(_ k: Int) async -> Double {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        var shown: [Int] = []
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            var own: [Int] = []
            for i in 0..<k {
                own.append(i)
                continuation.yield(i)
            }
            continuation.finish()
            withExtendedLifetime(own) {}
        }
        for await value in stream { shown.append(value) }
        let elapsed = monotonicNanoseconds() - start
        checkArray("AsyncStream", shown, k: k)
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func mainQueueArray(_ k: Int) async -> Double {
        let shown = GraphLock<(elements: [Int], done: CheckedContinuation<Void, Never>?)>(([], nil))
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            shown.withLock { $0.done = done }
            DispatchQueue.global().async {
                var own: [Int] = []
                for i in 0..<k {
                    own.append(i)
                    DispatchQueue.main.async {
                        let finished = shown.withLock { state -> CheckedContinuation<Void, Never>? in
                            state.elements.append(i)
                            return state.elements.count == k ? state.done.take() : nil
                        }
                        finished?.resume()
                    }
                }
                withExtendedLifetime(own) {}
            }
        }
        let elapsed = monotonicNanoseconds() - start
        checkArray("main queue", shown.withLock { $0.elements }, k: k)
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func appendsAlone(_ k: Int) async -> Double {
        let items = ObservableArray<Int>()
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                for i in 0..<k { items.append(i) }
                done.resume()
            }
        }
        let elapsed = monotonicNanoseconds() - start
        checkArray("appends alone", items.array, k: k)
        return Double(elapsed) / Double(k)
    }

    private static func checkArray(_ what: String, _ shown: [Int], k: Int) {
        verify(
            shown.count == k && shown.elementsEqual(0..<k),
            "actors: array filled from a thread, \(what) ended with \(shown.count) elements, expected 0..<\(k)"
        )
    }

    // MARK: - Targets

    static let maxRatioCoalescedToHand = 1.0

    static func evaluateArrays(_ report: Report, plan: Plan) {
        let scenario = arrayScenario(plan.actorArrayAppends)
        guard let kit = report.median(scenario, kitCoalesced),
            let queue = report.median(scenario, arrayMainQueue),
            let stream = report.median(scenario, arrayStream)
        else { return }
        let best = min(queue, stream)
        var measured =
            "\(formatValue(kit)) ns / \(formatValue(best)) ns = \(formatRatio(kit / best))"
            + " (main queue \(formatValue(queue)) ns, AsyncStream \(formatValue(stream)) ns)"
        if let perEvent = report.median(scenario, kitArrayMain) {
            measured += "; observeValues \(formatValue(perEvent)) ns"
        }
        if let floor = report.median(scenario, arrayFloor) {
            measured += "; appends alone \(formatValue(floor)) ns (\(formatRatio(kit / floor)) of it)"
        }
        report.addTarget(
            TargetRow(
                target:
                    "array filled from a thread, coalesced main-actor closure <= \(formatRatio(maxRatioCoalescedToHand)) the best by hand",
                status: kit / best <= maxRatioCoalescedToHand ? .met : .missed,
                measured: measured))
    }
}
