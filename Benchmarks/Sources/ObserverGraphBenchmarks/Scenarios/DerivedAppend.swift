// Scenario 10: derived arrays. An `ObservableArray<Int>` of N elements followed by a `map` (and,
// separately, a `filter` keeping half of the elements), each derived array observed by one
// closure. K appends to the source, one at a time; each must reach the derived array as an
// insert. Unit: nanoseconds per append (the source's own append and delivery included), at
// N = 1k, 16k, 64k and 1M: the cost of a change must not grow with N (target 1M/1k <= 2).
// K = 20,000 appends: right after N-element arrays are built, their first appends are slower
// (each array outgrows its exact capacity: copies and fresh pages), a one-off cost that 2,000
// appends did not amortize at N = 1M (a 1M append then measured 3 to 5 times a 1k one).
//
// The reference is the source array alone with one observer (no derived array), at the same N.
//
// `derived set`: the same arrays, K sets at indices spread over the array (`set(_:at:)`, one
// update upstream), each new value of the opposite parity half of the time, so that the filter
// sees updates, deletes and inserts. After the sets, each derived array must equal the same
// function of the source. Unit: nanoseconds per set.

import ObserverGraph

enum DerivedAppend {
    static let family = ScenarioFamily(
        id: "derived",
        summary: "map/filter of an ObservableArray: ns per source append and per set at N = 1k..1M",
        run: run)

    static let map = "kit map"
    static let filter = "kit filter"
    static let sourceOnly = "source array alone"
    static let appends = 20_000

    static func scenario(_ n: Int) -> String { "derived append N=\(sizeLabel(n))" }
    static func setScenario(_ n: Int) -> String { "derived set N=\(sizeLabel(n))" }

    static func sizes(_ plan: Plan) -> [Int] {
        plan.diffSamples >= 5 ? [1_000, 16_000, 64_000, 1_000_000] : [1_000, 16_000]
    }

    static func run(plan: Plan, report: Report) {
        for n in sizes(plan) {
            runAppends(n, plan: plan, report: report)
            runSets(n, plan: plan, report: report)
        }
        let all = sizes(plan)
        guard let small = all.first, let large = all.last, large > small else { return }
        for implementation in [map, filter] {
            guard let big = report.median(scenario(large), implementation),
                let little = report.median(scenario(small), implementation)
            else { continue }
            report.addDerived(
                DerivedRow(
                    name: "derived append \(sizeLabel(large))/\(sizeLabel(small))",
                    implementation: implementation,
                    value: big / little, unit: "x",
                    detail: "\(formatValue(big)) / \(formatValue(little)) ns/append"))
        }
    }

    static func runSets(_ n: Int, plan: Plan, report: Report) {
        progress(setScenario(n))
        let initial = Array(0..<n)
        func contender(
            _ name: String, derive: @escaping (ObservableArray<Int>) -> ReadOnlyObservableArray<Int>?,
            expected: @escaping ([Int]) -> [Int]
        ) -> Contender {
            Contender(name: name) {
                let source = ObservableArray(initial.map { $0 })
                let derived = derive(source)
                let seen = UncheckedSendable(value: Obs())
                let token = (derived ?? source).observeValuesNonisolated { change in
                    seen.value.receive(change.array.count)
                }
                let start = monotonicNanoseconds()
                for i in 0..<appends { try? source.set(i, at: (i &* 7_919) % n) }
                let elapsed = monotonicNanoseconds() - start
                token.cancel()
                if let derived {
                    verify(derived.array == expected(source.array), "\(name): out of step after the sets")
                }
                withExtendedLifetime(derived) {}
                return [Double(elapsed) / Double(appends)]
            }
        }
        let contenders = [
            contender(map, derive: { $0.map { $0 &* 2 } }, expected: { $0.map { $0 &* 2 } }),
            contender(filter, derive: { $0.filter { $0 % 2 == 0 } }, expected: { $0.filter { $0 % 2 == 0 } }),
            contender(sourceOnly, derive: { _ in nil }, expected: { $0 }),
        ]
        let stats = roundRobin(contenders, samples: plan.diffSamples >= 5 ? 7 : 2, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: setScenario(n), implementation: contender.name, stats: result[0], unit: "ns/set",
                reference: contender.name == sourceOnly)
        }
    }

    static func runAppends(_ n: Int, plan: Plan, report: Report) {
        progress(scenario(n))
        let initial = Array(0..<n)
        func contender(
            _ name: String, derive: @escaping (ObservableArray<Int>) -> ReadOnlyObservableArray<Int>?
        )
            -> Contender
        {
            Contender(name: name) {
                // Its own buffer: no copy on the first append.
                let source = ObservableArray(initial.map { $0 })
                let derived = derive(source)
                let seen = UncheckedSendable(value: Obs())
                let token = (derived ?? source).observeValuesNonisolated { change in
                    seen.value.receive(change.changeset.inserts.last ?? 0)
                }
                let start = monotonicNanoseconds()
                for i in 0..<appends { source.append(n + i) }
                let elapsed = monotonicNanoseconds() - start
                token.cancel()
                let count = derived?.count ?? source.count
                let expected = name == filter ? (n + appends + 1) / 2 : n + appends
                verify(count == expected, "\(name): \(count) elements, expected \(expected)")
                withExtendedLifetime(derived) {}
                return [Double(elapsed) / Double(appends)]
            }
        }
        let contenders = [
            contender(map) { $0.map { $0 &* 2 } },
            contender(filter) { $0.filter { $0 % 2 == 0 } },
            contender(sourceOnly) { _ in nil },
        ]
        let stats = roundRobin(contenders, samples: plan.diffSamples >= 5 ? 7 : 2, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0],
                unit: "ns/append",
                reference: contender.name == sourceOnly)
        }
    }
}
