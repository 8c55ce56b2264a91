// Scenario 8: observable array append. K appends, one at a time, to an `ObservableArray<Int>`
// that starts empty and is observed by 10 closure observers; each observer receives the change
// (the new array and its changeset) and adds the changeset's inserted index to its `Obs` total.
// Unit: nanoseconds per append = time / K.
//
// The reference is the same work by hand: a plain `[Int]` append, then one `ArrayChange` with
// the same array and the same changeset (`inserts [count - 1]`, built the way the kit builds it)
// handed to a loop over 10 closures that do the same thing to the same observers. The
// difference is the kit's machinery: lock, ordered delivery queue, closure observers.

import Baselines
import ObserverGraph

enum ArrayAppend {
    static let family = ScenarioFamily(
        id: "arrayappend",
        summary:
            "ObservableArray append, its other mutations and a sectioned append, with 10 observers"
            + " receiving the changeset, ns per change",
        run: run)

    static let kit = "kit ObservableArray"
    static let byHand = "array + 10 closures"
    static let gatedByHand = "array + 10 gated closures"
    static let observerCount = 10

    static func scenario(_ k: Int) -> String {
        "array append K=\(sizeLabel(k)) observers=\(observerCount)"
    }

    static func run(plan: Plan, report: Report) {
        let k = plan.arrayAppends
        progress(scenario(k))
        let base = opaque(1)
        let observers = (0..<observerCount).map { _ in Obs() }
        // Each observer adds the inserted index of each append: 0 + 1 + ... + (K - 1).
        let expectedGrowth = observerCount &* (k &* (k - 1) / 2)

        /// The hand-written appends: a plain array, one change per append handed to each closure
        /// (each behind an atomic gate when `gated`).
        func appendByHand(gated: Bool) -> (elapsed: UInt64, array: [Int]) {
            let gates = observers.map { _ in CallGateWord() }
            let closures: [(ArrayChange<Int>) -> Void] = observers.map { observer in
                { change in observer.receive(change.changeset.inserts.last ?? 0) }
            }
            var array: [Int] = []
            let start = monotonicNanoseconds()
            for i in 0..<k {
                array.append(base &+ i)
                let change = ArrayChange(array: array, changeset: ArrayChangeset(inserts: [array.count - 1]))
                if gated {
                    for index in closures.indices where gates[index].enter() {
                        closures[index](change)
                        gates[index].leave()
                    }
                } else {
                    for closure in closures { closure(change) }
                }
            }
            return (monotonicNanoseconds() - start, array)
        }

        func checked(_ name: String, _ body: () -> (elapsed: UInt64, array: [Int])) -> [Double] {
            let before = totalOf(observers)
            let (elapsed, array) = body()
            let grown = totalOf(observers) &- before
            verify(grown == expectedGrowth, "\(name): totals grew by \(grown), expected \(expectedGrowth)")
            verify(
                array.count == k && array.first == base && array.last == base &+ k - 1,
                "\(name): the array holds \(array.count) elements, expected \(k)")
            return [Double(elapsed) / Double(k)]
        }

        let contenders = [
            Contender(name: kit) {
                checked(kit) {
                    let array = ObservableArray<Int>()
                    let tokens = observers.map { observer in
                        let target = UncheckedSendable(value: observer)
                        return array.observeValuesNonisolated { change in
                            target.value.receive(change.changeset.inserts.last ?? 0)
                        }
                    }
                    let start = monotonicNanoseconds()
                    for i in 0..<k { array.append(base &+ i) }
                    let elapsed = monotonicNanoseconds() - start
                    for token in tokens { token.cancel() }
                    return (elapsed, array.array)
                }
            },
            Contender(name: byHand) { checked(byHand) { appendByHand(gated: false) } },
            // The same with what an exact `cancel()` takes at least: each closure behind an
            // atomic gate that a call enters and leaves (see `HandGatedValue`).
            Contender(name: gatedByHand) { checked(gatedByHand) { appendByHand(gated: true) } },
        ]
        let stats = roundRobin(contenders, samples: plan.arrayAppendSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(k), implementation: contender.name, stats: result[0], unit: "ns/append",
                reference: contender.name == byHand)
        }
        runMutations(plan: plan, report: report)
        runSectioned(plan: plan, report: report)
    }
}
