// Scenario 12: operators. K sets of an `ObservableValue<Int>` through the chain
// `map -> filter -> removeDuplicates` with one observer at the end, next to the same chain in
// OpenCombine (`CurrentValueSubject` + `map` + `filter` + `removeDuplicates` + `sink`) and to
// hand-written closures (the limit: four indirect calls, no machinery). A fourth row is what a
// user writes with the kit but without operators: one observer on the value doing the three
// steps by hand. Unit: nanoseconds per set = time / K.
//
// The sets are 0, 0, 1, 1, 2, 2, ...: `map` multiplies by 3, `filter` keeps even results, and
// `removeDuplicates` drops the second of each pair, so the observer gets K/4 values. The source
// starts at -1 (mapped to -3, filtered out), so no implementation delivers at subscription.
//
// The diamond: `a = x.map { 2x }`, `b = x.map { x + 1 }`, `combineLatest(a, b)` observed, K
// sets. The kit delivers once per set with consistent inputs; OpenCombine's `CombineLatest`
// delivers twice per set, the first time with one new and one old input (a glitch); OpenCombine
// 0.14.0 has no `combineLatest`, so its row is Combine's, written on a `PassthroughSubject`.
// Unit: nanoseconds per set; each row's note gives its deliveries and inconsistent pairs.

import ObserverGraph
import OpenCombine

enum OperatorChain {
    static let family = ScenarioFamily(
        id: "operators",
        summary: "map > filter > removeDuplicates, and a diamond: kit, OpenCombine, closures; ns per set",
        run: run)

    static let kit = "kit operators"
    static let kitByHand = "kit value + hand-written observer"
    static let openCombine = "OpenCombine"
    static let openCombineDiamond = "OpenCombine (hand combineLatest)"
    static let closures = "hand-written closures"

    static func chainScenario(_ sets: Int) -> String {
        "chain map>filter>removeDuplicates K=\(sizeLabel(sets))"
    }
    static func diamondScenario(_ sets: Int) -> String {
        "diamond map,map>combineLatest K=\(sizeLabel(sets))"
    }

    static func run(plan: Plan, report: Report) {
        progress(chainScenario(plan.operatorSets))
        measureChain(plan: plan, report: report)
        progress(diamondScenario(plan.operatorSets / 4))
        measureDiamond(plan: plan, report: report)
    }

    /// The value of set `i`: each value twice in a row.
    @inline(__always)
    static func input(_ i: Int) -> Int { i >> 1 }

    /// What the observer of the chain receives over `sets` sets (a multiple of 4): the count and
    /// the sum, 3 * (0 + 2 + 4 + ... + (sets/2 - 2)).
    static func expectedChain(_ sets: Int) -> (count: Int, sum: Int) {
        let count = sets / 4
        return (count, 3 * count * (count - 1))
    }

    private static func measureChain(plan: Plan, report: Report) {
        let sets = plan.operatorSets
        let expected = expectedChain(sets)
        let scale = opaque(3)
        let contenders = [
            Contender(name: kit) {
                let source = ObservableValue(opaque(-1))
                let seen = UncheckedSendable(value: Counter())
                let token = source.map { $0 &* scale }.filter { $0 % 2 == 0 }.removeDuplicates()
                    .observeValuesNonisolated { seen.value.receive($0) }
                let start = monotonicNanoseconds()
                for i in 0..<sets { source.value = input(i) }
                let elapsed = monotonicNanoseconds() - start
                token.cancel()
                seen.value.check(kit, expected)
                return [Double(elapsed) / Double(sets)]
            },
            Contender(name: kitByHand) {
                let source = ObservableValue(opaque(-1))
                let seen = UncheckedSendable(value: Counter())
                let last = UncheckedSendable(value: Box<Int?>(nil))
                let token = source.observeValuesNonisolated { value in
                    let mapped = value &* scale
                    guard mapped % 2 == 0, last.value.value != mapped else { return }
                    last.value.value = mapped
                    seen.value.receive(mapped)
                }
                let start = monotonicNanoseconds()
                for i in 0..<sets { source.value = input(i) }
                let elapsed = monotonicNanoseconds() - start
                token.cancel()
                seen.value.check(kitByHand, expected)
                return [Double(elapsed) / Double(sets)]
            },
            Contender(name: openCombine) {
                let subject = CurrentValueSubject<Int, Never>(opaque(-1))
                let seen = Counter()
                let cancellable = subject.map { $0 &* scale }.filter { $0 % 2 == 0 }.removeDuplicates()
                    .sink { seen.receive($0) }
                let start = monotonicNanoseconds()
                for i in 0..<sets { subject.send(input(i)) }
                let elapsed = monotonicNanoseconds() - start
                cancellable.cancel()
                seen.check(openCombine, expected)
                return [Double(elapsed) / Double(sets)]
            },
            Contender(name: closures) {
                let seen = Counter()
                let last = Box<Int?>(nil)
                // Each step is an opaque closure, so the optimizer cannot fuse the chain.
                let sink: (Int) -> Void = opaque { seen.receive($0) }
                let dedupe: (Int) -> Void = opaque { value in
                    if last.value != value {
                        last.value = value
                        sink(value)
                    }
                }
                let keep: (Int) -> Void = opaque { if $0 % 2 == 0 { dedupe($0) } }
                let map: (Int) -> Void = opaque { keep($0 &* scale) }
                let start = monotonicNanoseconds()
                for i in 0..<sets { map(input(i)) }
                let elapsed = monotonicNanoseconds() - start
                seen.check(closures, expected)
                return [Double(elapsed) / Double(sets)]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.operatorSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: chainScenario(sets), implementation: contender.name, stats: result[0],
                unit: "ns/set", reference: contender.name == closures)
        }
    }

    private static func measureDiamond(plan: Plan, report: Report) {
        let sets = plan.operatorSets / 4
        let contenders = [
            Contender(name: kit) {
                let source = ObservableValue(opaque(0))
                let pairs = UncheckedSendable(value: PairCounter())
                let a = source.map { $0 &* 2 }
                let b = source.map { $0 &+ 1 }
                let token = a.combineLatest(b).observeValuesNonisolated { pairs.value.receive($0) }
                pairs.value.reset()  // the replayed (0, 1)
                let start = monotonicNanoseconds()
                for i in 1...sets { source.value = i }
                let elapsed = monotonicNanoseconds() - start
                token.cancel()
                pairs.value.check(kit, deliveries: sets, inconsistent: 0)
                return [Double(elapsed) / Double(sets)]
            },
            Contender(name: openCombineDiamond) {
                let subject = CurrentValueSubject<Int, Never>(opaque(0))
                let pairs = PairCounter()
                let a = subject.map { $0 &* 2 }
                let b = subject.map { $0 &+ 1 }
                // OpenCombine 0.14.0 has no `combineLatest`: this is Combine's, written with a
                // subject (the latest of each input; a pair once both have one, on every input).
                let latest = Box<(a: Int?, b: Int?)>((nil, nil))
                let output = PassthroughSubject<(Int, Int), Never>()
                let cancellables = [
                    output.sink { pairs.receive($0) },
                    a.sink { value in
                        latest.value.a = value
                        if let other = latest.value.b { output.send((value, other)) }
                    },
                    b.sink { value in
                        latest.value.b = value
                        if let other = latest.value.a { output.send((other, value)) }
                    },
                ]
                pairs.reset()
                let start = monotonicNanoseconds()
                for i in 1...sets { subject.send(i) }
                let elapsed = monotonicNanoseconds() - start
                for cancellable in cancellables { cancellable.cancel() }
                pairs.check(openCombineDiamond, deliveries: 2 * sets, inconsistent: sets)
                return [Double(elapsed) / Double(sets)]
            },
            Contender(name: closures) {
                let pairs = PairCounter()
                let sink: ((Int, Int)) -> Void = opaque { pairs.receive($0) }
                let first: (Int) -> Int = opaque { $0 &* 2 }
                let second: (Int) -> Int = opaque { $0 &+ 1 }
                let start = monotonicNanoseconds()
                for i in 1...sets { sink((first(i), second(i))) }
                let elapsed = monotonicNanoseconds() - start
                pairs.check(closures, deliveries: sets, inconsistent: 0)
                return [Double(elapsed) / Double(sets)]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.operatorSamples, warmup: 1)
        let notes = [
            kit: "1 delivery per set, consistent", openCombineDiamond: "2 deliveries per set, 1 inconsistent",
            closures: "1 delivery per set",
        ]
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: diamondScenario(sets), implementation: contender.name, stats: result[0],
                unit: "ns/set", reference: contender.name == closures, note: notes[contender.name])
        }
    }
}

/// Counts and sums what a chain delivers.
private final class Counter {
    private(set) var count = 0
    private(set) var sum = 0

    func receive(_ value: Int) {
        count &+= 1
        sum &+= value
    }

    func check(_ name: String, _ expected: (count: Int, sum: Int)) {
        verify(
            count == expected.count && sum == expected.sum,
            "operator chain \(name): \(count) values summing to \(sum), "
                + "expected \(expected.count) and \(expected.sum)")
    }
}

/// Counts the pairs a diamond delivers, and those whose inputs come from different sets.
private final class PairCounter {
    private(set) var count = 0
    private(set) var inconsistent = 0

    func receive(_ pair: (Int, Int)) {
        count &+= 1
        if pair.0 != 2 &* (pair.1 &- 1) { inconsistent &+= 1 }
    }

    func reset() {
        count = 0
        inconsistent = 0
    }

    func check(_ name: String, deliveries: Int, inconsistent expected: Int) {
        verify(
            count == deliveries && inconsistent == expected,
            "operator diamond \(name): \(count) deliveries (\(inconsistent) inconsistent), "
                + "expected \(deliveries) (\(expected))")
    }
}

/// A mutable cell for a hand-written closure's state.
final class Box<Value> {
    var value: Value

    init(_ value: Value) { self.value = value }
}
