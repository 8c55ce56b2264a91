// Scenario 14: the life of an observable value. K values are made, each observed by one closure
// (which receives the value it starts with), then every observation and every value is
// released: what an app pays for a view model per row, or for the reference app's items, each
// of which holds two `ObservableValue`s. Next to OpenCombine's `CurrentValueSubject` with one
// `sink` (released the same way) and a hand-written locked value with a closure array (the
// limit: one lock and one array, no way to cancel one closure). Unit: nanoseconds per value =
// time / K.

import ObserverGraph
import OpenCombine

enum ValueLifecycle {
    static let family = ScenarioFamily(
        id: "lifecycle",
        summary: "make K observable values, observe each with one closure, release all; ns per value",
        run: run)

    static let kit = "kit ObservableValue"
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
            Contender(name: kit) {
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
                tokens = []
                values = []
                let elapsed = monotonicNanoseconds() - start
                check(kit, total.value.value, expected)
                return [Double(elapsed) / Double(count)]
            },
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
                cancellables = []
                values = []
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
                values = []
                let elapsed = monotonicNanoseconds() - start
                check(hand, total.value.value, expected)
                return [Double(elapsed) / Double(count)]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.lifecycleSamples, warmup: 1)
        let notes = [hand: "no token: its closures go with the value"]
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(count), implementation: contender.name, stats: result[0],
                unit: "ns/value", reference: contender.name == hand, note: notes[contender.name])
        }
    }

    private static func check(_ name: String, _ total: Int, _ expected: Int) {
        verify(total == expected, "\(name): the closures received \(total) in all, expected \(expected)")
    }
}
