// Part of the churn family: subscribing objects that were never referenced weakly. The first
// weak reference to a Swift object allocates its side table (a malloc and an atomic swap of the
// object's refcount word), and every later retain and release of that object takes the runtime's
// slower side-table path. The churn scenario reuses its observers, so its subscribes find the
// side table already there; this one measures the first subscribe of fresh objects, and the side
// table's cost alone, so that what the kit adds above it can be read off. Unit: ns per subscribe.
//
// Each sample creates N fresh observers before its timing starts and frees them after it ends.

import Foundation
import ObserverGraph

enum ChurnFirstWeak {
    static let kit = "kit"
    static let handRegistry = "hand registry"
    static let sideTable = "first weak reference only"
    static let secondWeak = "weak reference, side table exists"
    static let notificationCenter = "NotificationCenter"

    static func scenario(_ n: Int) -> String { "churn subscribe fresh objects N=\(sizeLabel(n))" }

    static func measure(n: Int, plan: Plan, report: Report) {
        progress("churn fresh objects N=\(sizeLabel(n))")
        let rounds = max(1, plan.churnOperationsPerSample / n)

        /// Runs `rounds` rounds, each on `n` fresh observers; `body` times one round.
        func sample(_ body: ([Obs]) -> UInt64) -> [Double] {
            var total: UInt64 = 0
            for _ in 0..<rounds {
                let fresh = (0..<n).map { _ in Obs() }
                total += body(fresh)
            }
            return [Double(total) / Double(n * rounds)]
        }

        let contenders = [
            Contender(name: kit) {
                sample { fresh in
                    let subject = Subject()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for observer in fresh where subject.addObserver(observer) != nil { done &+= 1 }
                    let elapsed = monotonicNanoseconds() - start
                    verify(done == n, "kit fresh subscribe: \(done) of \(n)")
                    return elapsed
                }
            },
            Contender(name: handRegistry) {
                sample { fresh in
                    let registry = HandRegistry()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for observer in fresh where registry.add(observer) { done &+= 1 }
                    let elapsed = monotonicNanoseconds() - start
                    verify(done == n, "hand registry fresh subscribe: \(done) of \(n)")
                    return elapsed
                }
            },
            Contender(name: sideTable) {
                sample { fresh in
                    var weaks = [Weak](repeating: Weak(object: nil), count: n)
                    let start = monotonicNanoseconds()
                    for i in fresh.indices { weaks[i].object = fresh[i] }
                    let elapsed = monotonicNanoseconds() - start
                    withExtendedLifetime(weaks) {}
                    return elapsed
                }
            },
            Contender(name: secondWeak) {
                sample { fresh in
                    let first = fresh.map { Weak(object: $0) }
                    var weaks = [Weak](repeating: Weak(object: nil), count: n)
                    let start = monotonicNanoseconds()
                    for i in fresh.indices { weaks[i].object = fresh[i] }
                    let elapsed = monotonicNanoseconds() - start
                    withExtendedLifetime((first, weaks)) {}
                    return elapsed
                }
            },
            Contender(name: notificationCenter) {
                let name = Notification.Name("ObserverGraphBenchmarks.fresh")
                return sample { fresh in
                    let center = NotificationCenter()
                    var handles: [any NSObjectProtocol] = []
                    handles.reserveCapacity(n)
                    let start = monotonicNanoseconds()
                    for observer in fresh {
                        let target = UncheckedSendable(value: observer)
                        handles.append(
                            center.addObserver(forName: name, object: nil, queue: nil) { note in
                                target.value.receive(note.object as? Int ?? 0)
                            })
                    }
                    let elapsed = monotonicNanoseconds() - start
                    for handle in handles { center.removeObserver(handle) }
                    return elapsed
                }
            },
        ]
        let stats = roundRobin(contenders, samples: plan.churnSamples, warmup: plan.churnWarmup)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0], unit: "ns/op",
                reference: contender.name == sideTable)
        }
        // What the kit adds above the side table the weak reference needs anyway.
        if let kitCost = report.median(scenario(n), kit), let side = report.median(scenario(n), sideTable),
            let second = report.median(scenario(n), secondWeak)
        {
            let above = kitCost - (side - second)
            report.addDerived(
                DerivedRow(
                    name: "churn subscribe fresh N=\(sizeLabel(n)): kit above the side table",
                    implementation: kit, value: above, unit: "ns/op",
                    detail:
                        "\(formatValue(kitCost)) - (\(formatValue(side)) first weak - \(formatValue(second)) later weak)"
                ))
        }
    }
}
