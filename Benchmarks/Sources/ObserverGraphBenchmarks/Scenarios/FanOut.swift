// Scenario 1: broadcast fan-out. One observable delivers one Int to N observers; every
// implementation calls the same `Obs.receive` on the same observer objects. Unit: nanoseconds
// per delivery = time / (N x rounds).

import Foundation
import ObserverGraph
import OpenCombine

enum FanOut {
    static let family = ScenarioFamily(
        id: "fanout",
        summary: "one observable to N observers, ns per delivery, kit vs hand-written loops and peers",
        run: run)

    static let kit = "kit"
    static let nonOwningLimit = "non-owning limit"
    static let owningLimit = "owning limit"
    static let openCombine = "OpenCombine"
    static let notificationCenter = "NotificationCenter"

    static func scenario(_ n: Int) -> String { "fan-out N=\(sizeLabel(n))" }

    static func run(plan: Plan, report: Report) {
        for n in plan.fanOutSizes {
            progress(scenario(n))
            measure(n: n, plan: plan, report: report)
        }
    }

    private static func measure(n: Int, plan: Plan, report: Report) {
        let value = opaque(1)
        let observers = (0..<n).map { _ in Obs() }

        // (a) The kit: a typed broadcast over its weakly held observers.
        let subject = Subject()
        for observer in observers { subject.addObserver(observer) }

        // (b) The non-owning limit: a hand-written loop over weak references to the same objects.
        let weaks = observers.map { Weak(object: $0) }

        // (c) The owning limit: a loop over closures that hold the observers strongly.
        let closures: [(Int) -> Void] = observers.map { observer in { observer.receive($0) } }

        // (d) OpenCombine: a PassthroughSubject with one sink per observer.
        let passthrough = PassthroughSubject<Int, Never>()
        let cancellables = observers.map { observer in passthrough.sink { observer.receive($0) } }

        // (e) NotificationCenter: block-based observers on a private center (the selector-based
        // API does not exist on Linux). The value travels as the notification's object, which
        // is cheaper than a userInfo dictionary.
        let center = NotificationCenter()
        let name = Notification.Name("ObserverGraphBenchmarks.fanout")
        let tokens = observers.map { observer in
            let target = UncheckedSendable(value: observer)
            return center.addObserver(forName: name, object: nil, queue: nil) { note in
                target.value.receive(note.object as? Int ?? 0)
            }
        }

        // Each closure runs `rounds` rounds and returns the nanoseconds they took.
        var roundsRun = 0
        let timed: [(String, (Int) -> UInt64)] = [
            (
                kit,
                { rounds in
                    var delivered = 0
                    let start = monotonicNanoseconds()
                    for _ in 0..<rounds {
                        delivered &+= subject.broadcast(as: Obs.self) { $0.receive(value) }
                    }
                    let elapsed = monotonicNanoseconds() - start
                    verify(delivered == rounds * n, "kit delivered \(delivered) of \(rounds * n)")
                    return elapsed
                }
            ),
            (
                nonOwningLimit,
                { rounds in
                    let start = monotonicNanoseconds()
                    for _ in 0..<rounds {
                        for i in weaks.indices { weaks[i].object?.receive(value) }
                    }
                    return monotonicNanoseconds() - start
                }
            ),
            (
                owningLimit,
                { rounds in
                    let start = monotonicNanoseconds()
                    for _ in 0..<rounds {
                        for closure in closures { closure(value) }
                    }
                    return monotonicNanoseconds() - start
                }
            ),
            (
                openCombine,
                { rounds in
                    let start = monotonicNanoseconds()
                    for _ in 0..<rounds { passthrough.send(value) }
                    return monotonicNanoseconds() - start
                }
            ),
            (
                notificationCenter,
                { rounds in
                    let start = monotonicNanoseconds()
                    for _ in 0..<rounds { center.post(name: name, object: value) }
                    return monotonicNanoseconds() - start
                }
            ),
        ]

        let before = totalOf(observers)
        let contenders = timed.map { name, run in
            let rounds = calibrateRepetitions(targetNanoseconds: plan.fanOutSampleNanoseconds) { rounds in
                roundsRun += rounds
                return run(rounds)
            }
            return Contender(name: name) {
                roundsRun += rounds
                return [Double(run(rounds)) / Double(rounds * n)]
            }
        }
        let stats = roundRobin(contenders, samples: plan.fanOutSamples, warmup: 1)

        // Every round of every implementation added `value` to every observer's total.
        let delivered = totalOf(observers) &- before
        verify(
            delivered == roundsRun &* n &* value,
            "fan-out N=\(n): totals grew by \(delivered), expected \(roundsRun * n * value)")

        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0],
                unit: "ns/delivery", reference: contender.name == nonOwningLimit)
        }

        for cancellable in cancellables { cancellable.cancel() }
        for token in tokens { center.removeObserver(token) }
        withExtendedLifetime((subject, weaks, closures)) {}
    }
}
