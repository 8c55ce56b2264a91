// Scenario 8, continued: the array mutations other than append, and the sectioned array, each
// observed by 10 closure observers, next to the same work by hand.
//
// - "array mutations": K rounds on an `ObservableArray<Int>` of 1,000 elements; each round
//   inserts in the middle, sets an element, removes from the middle and moves one element (four
//   mutations, four changes delivered). Each observer adds the change's first index to its total.
//   By hand: a plain `[Int]`, the same four mutations, each followed by one `ArrayChange` with the
//   changeset the kit sends (built the way the kit builds it) handed to a loop over 10 closures.
//   Unit: nanoseconds per mutation = time / (4 K).
// - "sectioned append": K appends spread over the 10 sections of an `ObservableSectionedArray`
//   (section i % 10). Each observer adds the appended item's index in its section. By hand: an
//   array of 10 `ArraySection`s, the append, then the new sections and the same
//   `SectionedChangeset` handed to 10 closures. Unit: nanoseconds per append.
//
// Both references pay the array work the kit pays (the copy-free mutation of a uniquely held
// buffer, the memmove of an insert in the middle); the difference is the kit's machinery.

import Baselines
import ObserverGraph

extension ArrayAppend {
    static let mutationsKit = "kit ObservableArray"
    static let mutationsByHand = "array + 10 closures"
    static let sectionedKit = "kit ObservableSectionedArray"
    static let sectionedByHand = "sections + 10 closures"
    /// Elements of the array the mutations work on.
    static let mutationsArraySize = 1_000
    static let sectionCount = 10

    static func mutationsScenario(_ k: Int) -> String {
        "array mutations K=\(sizeLabel(k)) observers=\(observerCount)"
    }

    static func sectionedScenario(_ k: Int) -> String {
        "sectioned append K=\(sizeLabel(k)) observers=\(observerCount)"
    }

    /// The first index a changeset names, of whichever kind it is (what every observer adds up).
    @inline(__always)
    static func firstIndex(_ changeset: ArrayChangeset) -> Int {
        changeset.inserts.first ?? changeset.updates.first ?? changeset.deletes.first
            ?? changeset.moves.first?.to ?? 0
    }

    /// The nanoseconds `body` takes; then cancels the observers' `tokens` (not timed).
    static func timedThenCancelled(_ tokens: [SubscriptionToken], _ body: () -> Void) -> UInt64 {
        let start = monotonicNanoseconds()
        body()
        let elapsed = monotonicNanoseconds() - start
        for token in tokens { token.cancel() }
        return elapsed
    }

    /// The positions one round of mutations touches in an array of `size` (which it leaves at
    /// `size`): insert at `size / 2`, set at `size / 4`, remove at `size * 3 / 5`, move from
    /// `size / 10` to `size * 9 / 10`.
    static func roundPositions(_ size: Int) -> (insert: Int, set: Int, remove: Int, from: Int, to: Int) {
        (size / 2, size / 4, size * 3 / 5, size / 10, size * 9 / 10)
    }

    static func runMutations(plan: Plan, report: Report) {
        let k = plan.arrayAppends / 4
        progress(mutationsScenario(k))
        let observers = (0..<observerCount).map { _ in Obs() }
        let initial = Array(0..<mutationsArraySize)
        let at = roundPositions(mutationsArraySize)
        // Each round's four changes name these indices; every observer adds them up.
        let expectedGrowth = observerCount &* k &* (at.insert + at.set + at.remove + at.to)
        // The array both must end with: the four mutations, K times, on a plain array.
        var expected = initial
        for i in 0..<k {
            expected.insert(i, at: at.insert)
            expected[at.set] = i
            expected.remove(at: at.remove)
            expected.insert(expected.remove(at: at.from), at: at.to)
        }

        func checked(_ name: String, _ body: () -> (elapsed: UInt64, array: [Int])) -> [Double] {
            let before = totalOf(observers)
            let (elapsed, array) = body()
            let grown = totalOf(observers) &- before
            verify(grown == expectedGrowth, "\(name): totals grew by \(grown), expected \(expectedGrowth)")
            verify(array == expected, "\(name): the array differs from the same mutations on a plain array")
            return [Double(elapsed) / Double(4 * k)]
        }

        let contenders = [
            Contender(name: mutationsKit) {
                checked(mutationsKit) {
                    let array = ObservableArray(initial)
                    let tokens = observers.map { observer in
                        let target = UncheckedSendable(value: observer)
                        return array.observeValuesNonisolated { change in
                            target.value.receive(firstIndex(change.changeset))
                        }
                    }
                    let elapsed = timedThenCancelled(tokens) {
                        for i in 0..<k {
                            try? array.insert(i, at: at.insert)
                            try? array.set(i, at: at.set)
                            _ = try? array.remove(at: at.remove)
                            try? array.move(from: at.from, to: at.to)
                        }
                    }
                    return (elapsed, array.array)
                }
            },
            Contender(name: mutationsByHand) {
                checked(mutationsByHand) {
                    let closures: [(ArrayChange<Int>) -> Void] = observers.map { observer in
                        { change in observer.receive(firstIndex(change.changeset)) }
                    }
                    var array = initial
                    func deliver(_ changeset: ArrayChangeset) {
                        let change = ArrayChange(array: array, changeset: changeset)
                        for closure in closures { closure(change) }
                    }
                    let start = monotonicNanoseconds()
                    for i in 0..<k {
                        array.insert(i, at: at.insert)
                        deliver(ArrayChangeset(inserts: [at.insert]))
                        array[at.set] = i
                        deliver(ArrayChangeset(updates: [at.set]))
                        array.remove(at: at.remove)
                        deliver(ArrayChangeset(deletes: [at.remove]))
                        array.insert(array.remove(at: at.from), at: at.to)
                        deliver(ArrayChangeset(moves: [ArrayChangeset.Move(from: at.from, to: at.to)]))
                    }
                    return (monotonicNanoseconds() - start, array)
                }
            },
        ]
        let stats = roundRobin(contenders, samples: plan.arrayAppendSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: mutationsScenario(k), implementation: contender.name, stats: result[0],
                unit: "ns/mutation", reference: contender.name == mutationsByHand)
        }
    }

    static func runSectioned(plan: Plan, report: Report) {
        let k = plan.arrayAppends
        progress(sectionedScenario(k))
        let observers = (0..<observerCount).map { _ in Obs() }
        let emptySections = (0..<sectionCount).map { ArraySection(metadata: $0, items: [Int]()) }
        // Append i lands at index i / 10 of section i % 10; every observer adds those up.
        let expectedGrowth = observerCount &* (0..<k).reduce(0) { $0 &+ $1 / sectionCount }

        func checked(_ name: String, _ body: () -> (elapsed: UInt64, items: Int)) -> [Double] {
            let before = totalOf(observers)
            let (elapsed, items) = body()
            let grown = totalOf(observers) &- before
            verify(grown == expectedGrowth, "\(name): totals grew by \(grown), expected \(expectedGrowth)")
            verify(items == k, "\(name): \(items) items, expected \(k)")
            return [Double(elapsed) / Double(k)]
        }

        let contenders = [
            Contender(name: sectionedKit) {
                checked(sectionedKit) {
                    let sections = ObservableSectionedArray(emptySections)
                    let tokens = observers.map { observer in
                        let target = UncheckedSendable(value: observer)
                        return sections.observeValuesNonisolated { change in
                            target.value.receive(change.changeset.itemChanges.first?.value.inserts.first ?? 0)
                        }
                    }
                    let elapsed = timedThenCancelled(tokens) {
                        for i in 0..<k { try? sections.appendItem(i, toSection: i % sectionCount) }
                    }
                    return (elapsed, sections.sections.reduce(0) { $0 + $1.items.count })
                }
            },
            Contender(name: sectionedByHand) {
                checked(sectionedByHand) {
                    let closures: [([ArraySection<Int, Int>], SectionedChangeset) -> Void] = observers.map {
                        observer in
                        { _, changeset in
                            observer.receive(changeset.itemChanges.first?.value.inserts.first ?? 0)
                        }
                    }
                    var sections = emptySections
                    let start = monotonicNanoseconds()
                    for i in 0..<k {
                        let section = i % sectionCount
                        sections[section].items.append(i)
                        let changeset = SectionedChangeset(
                            itemChanges: [
                                section: ArrayChangeset(inserts: [sections[section].items.count - 1])
                            ])
                        for closure in closures { closure(sections, changeset) }
                    }
                    return (monotonicNanoseconds() - start, sections.reduce(0) { $0 + $1.items.count })
                }
            },
        ]
        let stats = roundRobin(contenders, samples: plan.arrayAppendSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: sectionedScenario(k), implementation: contender.name, stats: result[0],
                unit: "ns/append", reference: contender.name == sectionedByHand)
        }
    }
}
