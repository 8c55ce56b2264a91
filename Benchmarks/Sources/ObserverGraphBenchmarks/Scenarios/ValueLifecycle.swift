// Scenario 14: the life of an observable value. K values are made, each observed by one closure
// (which receives the value it starts with), then every observation and every value is
// released: what an app pays for a view model per row, or for the reference app's items, each
// of which holds two `ObservableValue`s. Next to OpenCombine's `CurrentValueSubject` with one
// `sink` (released the same way) and a hand-written locked value with a closure array (the
// limit: one lock and one array, no way to cancel one closure). Unit: nanoseconds per value =
// time / K.
//
// The observations go first, then the values (observers usually go before what they observe),
// in that order for sure: each array is emptied by a call the optimizer does not look into
// (`releaseAll`), since two plain assignments of `[]` may release the arrays in either order.
// A second kit contender releases the values first: each value then ends its observation with
// `.finished` from its deinit (OpenCombine's subscription holds its subject, so its order does
// not matter).

import ObserverGraph
import OpenCombine

enum ValueLifecycle {
    static let family = ScenarioFamily(
        id: "lifecycle",
        summary: "make K observable values, observe each with one closure, release all; ns per value",
        run: run)

    static let kit = "kit ObservableValue"
    static let kitValuesFirst = "kit ObservableValue, values released first"
    static let openCombine = "OpenCombine CurrentValueSubject"
    static let hand = "hand locked value + closures"

    static func scenario(_ count: Int) -> String { "value lifecycle K=\(sizeLabel(count))" }

    static func run(plan: Plan, report: Report) {
        let count = plan.lifecycleValues
        progress(scenario(count))
        // Every value starts at its index and its closure adds what it receives: each
        // implementation must end with 0 + 1 + ... + (K - 1).
        let expected = count * (count - 1) / 2
        let contenders = [
            Contender(name: kit) { [runKit(count, expected, valuesFirst: false)] },
            Contender(name: kitValuesFirst) { [runKit(count, expected, valuesFirst: true)] },
            Contender(name: openCombine) {
                let total = Box(0)
                let start = monotonicNanoseconds()
                var values: [CurrentValueSubject<Int, Never>] = []
                var cancellables: [AnyCancellable] = []
                values.reserveCapacity(count)
                cancellables.reserveCapacity(count)
                for i in 0..<count {
                    let value = CurrentValueSubject<Int, Never>(i)
                    cancellables.append(value.sink { total.value &+= $0 })
                    values.append(value)
                }
                releaseAll(&cancellables)
                releaseAll(&values)
                let elapsed = monotonicNanoseconds() - start
                check(openCombine, total.value, expected)
                return [Double(elapsed) / Double(count)]
            },
            Contender(name: hand) {
                let total = UncheckedSendable(value: Box(0))
                let start = monotonicNanoseconds()
                var values: [HandLockedValue] = []
                values.reserveCapacity(count)
                for i in 0..<count {
                    let value = HandLockedValue(i)
                    // Replays what it starts with, as the others do.
                    value.observeReplaying { total.value.value &+= $0 }
                    values.append(value)
                }
                releaseAll(&values)
                let elapsed = monotonicNanoseconds() - start
                check(hand, total.value.value, expected)
                return [Double(elapsed) / Double(count)]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.lifecycleSamples, warmup: 1)
        let notes = [
            hand: "no token: its closures go with the value",
            kitValuesFirst: "each value's deinit ends its observation with .finished",
        ]
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(count), implementation: contender.name, stats: result[0],
                unit: "ns/value", reference: contender.name == hand, note: notes[contender.name])
        }
    }

    /// One sample of a kit row, in ns per value: the tokens released first, or the values.
    private static func runKit(_ count: Int, _ expected: Int, valuesFirst: Bool) -> Double {
        let total = UncheckedSendable(value: Box(0))
        let start = monotonicNanoseconds()
        var values: [ObservableValue<Int>] = []
        var tokens: [SubscriptionToken] = []
        values.reserveCapacity(count)
        tokens.reserveCapacity(count)
        for i in 0..<count {
            let value = ObservableValue(i)
            tokens.append(value.observeValuesNonisolated { total.value.value &+= $0 })
            values.append(value)
        }
        if valuesFirst {
            releaseAll(&values)
            releaseAll(&tokens)
        } else {
            releaseAll(&tokens)
            releaseAll(&values)
        }
        let elapsed = monotonicNanoseconds() - start
        check(valuesFirst ? kitValuesFirst : kit, total.value.value, expected)
        return Double(elapsed) / Double(count)
    }

    /// Empties `array` (releasing its elements) where it is called: the optimizer does not look
    /// into it, so two calls release two arrays in the order written.
    @inline(never)
    private static func releaseAll<Element>(_ array: inout [Element]) {
        array = []
    }

    private static func check(_ name: String, _ total: Int, _ expected: Int) {
        verify(total == expected, "\(name): the closures received \(total) in all, expected \(expected)")
    }
}
