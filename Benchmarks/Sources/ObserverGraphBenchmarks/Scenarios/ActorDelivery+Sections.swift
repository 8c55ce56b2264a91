// Scenario: a sectioned array (4 sections) filled from a background thread, one item at a time
// into each section in turn, shown by a closure on the main actor that keeps the sections it is
// given (as a table view's model does). Unit: nanoseconds per item = (time from the first
// append until the main actor holds every item) / K.
//
// - kit coalesced main-actor closure: `observeValuesCoalesced { }`: at most one call per turn of
//   the main actor, with the sections then and the changes composed.
// - kit main-actor closure: `observeValues { }`: one call per item, each event holding its
//   sections until the main actor runs it, so an append made meanwhile copies the list of
//   sections and the section's items.
// - main queue by hand (the reference): the thread appends to its own sections and sends each
//   item to the main queue (`DispatchQueue.main.async`), which appends it to its copy.
// - appends alone (the floor): the same appends to an `ObservableSectionedArray` nobody
//   observes, timed until the thread is done.
// Every contender checks that the main actor ends with exactly the items appended.

import Dispatch
import ObserverGraph

extension ActorDelivery {
    static let sectionCount = 4

    static func sectionsScenario(_ k: Int) -> String {
        "actor: sectioned array filled from a thread K=\(sizeLabel(k))"
    }

    @MainActor
    static func runSections(plan: Plan, report: Report) async {
        let k = plan.actorArrayAppends
        progress(sectionsScenario(k))
        var coalesced: [Double] = []
        var perEvent: [Double] = []
        var mainQueue: [Double] = []
        var floor: [Double] = []
        for turn in 0..<(plan.asyncSamples + 1) {
            let a = await kitSections(k, coalesced: true)
            let b = await kitSections(k, coalesced: false)
            let c = await sectionsAlone(k)
            let d = await mainQueueSections(k)
            if turn > 0 {  // the first turn warms up
                coalesced.append(a)
                perEvent.append(b)
                floor.append(c)
                mainQueue.append(d)
            }
        }
        let scenario = sectionsScenario(k)
        report.add(
            scenario: scenario, implementation: kitCoalesced, stats: Stats(coalesced), unit: "ns/item")
        report.add(
            scenario: scenario, implementation: kitArrayMain, stats: Stats(perEvent), unit: "ns/item")
        report.add(
            scenario: scenario, implementation: arrayMainQueue, stats: Stats(mainQueue), unit: "ns/item",
            reference: true)
        report.add(scenario: scenario, implementation: arrayFloor, stats: Stats(floor), unit: "ns/item")
    }

    private static func emptySections() -> [ArraySection<Int, Int>] {
        (0..<sectionCount).map { ArraySection(metadata: $0, items: []) }
    }

    @MainActor
    private static func kitSections(_ k: Int, coalesced: Bool) async -> Double {
        let table = ObservableSectionedArray(emptySections())
        var shown: [ArraySection<Int, Int>] = []
        var done: CheckedContinuation<Void, Never>?
        let show = { (change: SectionedArrayChange<Int, Int>) in
            shown = change.sections
            if shown.last?.items.count == k / sectionCount {
                done?.resume()
                done = nil
            }
        }
        let token = coalesced ? table.observeValuesCoalesced(show) : table.observeValues(show)
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            for i in 0..<k { try? table.appendItem(i, toSection: i % sectionCount) }
        }
        // The main actor runs no call before this suspends, so `done` is set in time.
        await withCheckedContinuation { done = $0 }
        let elapsed = monotonicNanoseconds() - start
        checkSections(coalesced ? "coalesced closure" : "main-actor closure", shown, k: k)
        withExtendedLifetime(token) {}
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func mainQueueSections(_ k: Int) async -> Double {
        typealias Shown = (
            sections: [ArraySection<Int, Int>], count: Int, done: CheckedContinuation<Void, Never>?
        )
        let shown = GraphLock<Shown>((emptySections(), 0, nil))
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            shown.withLock { $0.done = done }
            DispatchQueue.global().async {
                var own = emptySections()
                for i in 0..<k {
                    own[i % sectionCount].items.append(i)
                    DispatchQueue.main.async {
                        let finished = shown.withLock { state -> CheckedContinuation<Void, Never>? in
                            state.sections[i % sectionCount].items.append(i)
                            state.count += 1
                            return state.count == k ? state.done.take() : nil
                        }
                        finished?.resume()
                    }
                }
                withExtendedLifetime(own) {}
            }
        }
        let elapsed = monotonicNanoseconds() - start
        checkSections("main queue", shown.withLock { $0.sections }, k: k)
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func sectionsAlone(_ k: Int) async -> Double {
        let table = ObservableSectionedArray(emptySections())
        let start = monotonicNanoseconds()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                for i in 0..<k { try? table.appendItem(i, toSection: i % sectionCount) }
                done.resume()
            }
        }
        let elapsed = monotonicNanoseconds() - start
        checkSections("appends alone", table.sections, k: k)
        return Double(elapsed) / Double(k)
    }

    private static func checkSections(_ what: String, _ shown: [ArraySection<Int, Int>], k: Int) {
        let expected = (0..<sectionCount).map { section in
            Array(stride(from: section, to: k, by: sectionCount))
        }
        verify(
            shown.map(\.items) == expected,
            "actors: sectioned array filled from a thread, \(what) ended with "
                + "\(shown.map(\.items.count)) items, expected \(k / sectionCount) in each section")
    }

    // MARK: - Targets

    static func evaluateSections(_ report: Report, plan: Plan) {
        let scenario = sectionsScenario(plan.actorArrayAppends)
        guard let kit = report.median(scenario, kitCoalesced),
            let queue = report.median(scenario, arrayMainQueue)
        else { return }
        var measured =
            "\(formatValue(kit)) ns / main queue \(formatValue(queue)) ns = \(formatRatio(kit / queue))"
        if let perEvent = report.median(scenario, kitArrayMain) {
            measured += "; observeValues \(formatValue(perEvent)) ns"
        }
        if let floor = report.median(scenario, arrayFloor) {
            measured += "; appends alone \(formatValue(floor)) ns (\(formatRatio(kit / floor)) of it)"
        }
        report.addTarget(
            TargetRow(
                target:
                    "sectioned array filled from a thread, coalesced main-actor closure <= \(formatRatio(maxRatioCoalescedToHand)) the main queue by hand",
                status: kit / queue <= maxRatioCoalescedToHand ? .met : .missed,
                measured: measured))
    }
}
