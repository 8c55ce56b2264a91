// Scenario 6: observable value set. Setting an `ObservableValue<Int>` observed by N closure
// observers, next to OpenCombine's `CurrentValueSubject<Int, Never>.send` to N sinks and the
// kit's core `broadcast` to the same N observer objects. Every delivery calls the same
// `Obs.receive` on the same observers. Unit: nanoseconds per delivery = time / (N x rounds).
//
// The reference is the kit's `broadcast`: the value layer is built on it (one ordered delivery
// queue per source, a closure observer per `observeValues`), so the kit row's ratio is the
// price of that layer, and the OpenCombine row's ratio sits on the same base.

import Baselines
import ObserverGraph
import OpenCombine

enum ValueSet {
    static let family = ScenarioFamily(
        id: "valueset",
        summary: "ObservableValue set to N closure observers vs CurrentValueSubject.send, ns per delivery",
        run: run)

    static let kitValue = "kit ObservableValue"
    static let kitBroadcast = "kit broadcast"
    static let openCombine = "OpenCombine CurrentValueSubject"
    static let owningLimit = "hand locked value + closures"
    static let gatedLimit = "hand locked value + gated closures"

    static func scenario(_ n: Int) -> String { "value set N=\(sizeLabel(n))" }

    static func run(plan: Plan, report: Report) {
        for n in plan.valueSetSizes {
            progress(scenario(n))
            measure(n: n, plan: plan, report: report)
        }
    }

    private static func measure(n: Int, plan: Plan, report: Report) {
        let value = opaque(1)
        let observers = (0..<n).map { _ in Obs() }

        // (a) The kit's value: one closure observer per object. The closures must be Sendable;
        // the observers are only touched on this thread (delivery is synchronous here).
        let observable = ObservableValue(opaque(0))
        let tokens = observers.map { observer in
            let target = UncheckedSendable(value: observer)
            return observable.observeValuesNonisolated { target.value.receive($0) }
        }

        // (b) The kit's core: a typed broadcast over the same objects, held weakly.
        let subject = Subject()
        for observer in observers { subject.addObserver(observer) }

        // (c) OpenCombine: a CurrentValueSubject with one sink per observer.
        let current = CurrentValueSubject<Int, Never>(opaque(0))
        let cancellables = observers.map { observer in current.sink { observer.receive($0) } }

        // (d) The owning limit: a hand-written locked value with an array of closures, called
        // after unlocking (the least a thread-safe value with closure observers can do).
        let hand = HandLockedValue(opaque(0))
        for observer in observers {
            let target = UncheckedSendable(value: observer)
            hand.observe { target.value.receive($0) }
        }

        // (e) The owning limit with what an exact `cancel()` takes at least: each closure behind
        // an atomic gate that a call enters and leaves (a canceller closes it and waits for a
        // call inside), as the kit's call gate does. No cancel happens during the run.
        let gated = HandGatedValue(opaque(0))
        for observer in observers {
            let target = UncheckedSendable(value: observer)
            gated.observe { target.value.receive($0) }
        }

        // Each closure runs `rounds` sets and returns the nanoseconds they took. The observers'
        // totals are read before and after (outside the timer): every round must have added
        // `value` to every observer, for each implementation on its own.
        func checked(_ name: String, _ rounds: Int, _ body: () -> UInt64) -> UInt64 {
            let before = totalOf(observers)
            let elapsed = body()
            let grown = totalOf(observers) &- before
            verify(
                grown == rounds &* n &* value,
                "\(scenario(n)) \(name): totals grew by \(grown), expected \(rounds * n * value)")
            return elapsed
        }
        let timed: [(String, (Int) -> UInt64)] = [
            (
                kitValue,
                { rounds in
                    checked(kitValue, rounds) {
                        let start = monotonicNanoseconds()
                        for _ in 0..<rounds { observable.value = value }
                        return monotonicNanoseconds() - start
                    }
                }
            ),
            (
                kitBroadcast,
                { rounds in
                    var delivered = 0
                    let elapsed = checked(kitBroadcast, rounds) {
                        let start = monotonicNanoseconds()
                        for _ in 0..<rounds {
                            delivered &+= subject.broadcast(as: Obs.self) { $0.receive(value) }
                        }
                        return monotonicNanoseconds() - start
                    }
                    verify(delivered == rounds * n, "kit broadcast delivered \(delivered) of \(rounds * n)")
                    return elapsed
                }
            ),
            (
                openCombine,
                { rounds in
                    checked(openCombine, rounds) {
                        let start = monotonicNanoseconds()
                        for _ in 0..<rounds { current.send(value) }
                        return monotonicNanoseconds() - start
                    }
                }
            ),
            (
                owningLimit,
                { rounds in
                    checked(owningLimit, rounds) {
                        let start = monotonicNanoseconds()
                        for _ in 0..<rounds { hand.set(value) }
                        return monotonicNanoseconds() - start
                    }
                }
            ),
            (
                gatedLimit,
                { rounds in
                    checked(gatedLimit, rounds) {
                        let start = monotonicNanoseconds()
                        for _ in 0..<rounds { gated.set(value) }
                        return monotonicNanoseconds() - start
                    }
                }
            ),
        ]

        let contenders = timed.map { name, run in
            let rounds = calibrateRepetitions(targetNanoseconds: plan.valueSetSampleNanoseconds, run)
            return Contender(name: name) { [Double(run(rounds)) / Double(rounds * n)] }
        }
        let stats = roundRobin(contenders, samples: plan.valueSetSamples, warmup: 1)
        blackHole(observable.value)
        blackHole(current.value)

        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0],
                unit: "ns/delivery", reference: contender.name == kitBroadcast)
        }

        for token in tokens { token.cancel() }
        for cancellable in cancellables { cancellable.cancel() }
        withExtendedLifetime((observable, subject, current, hand, gated)) {}
    }
}

/// A value behind a lock with an array of closures, called in order after unlocking: the
/// hand-written limit the kit's `ObservableValue` is compared with.
final class HandLockedValue: @unchecked Sendable {
    private let state: GraphLock<(value: Int, handlers: [@Sendable (Int) -> Void])>

    init(_ value: Int) {
        state = GraphLock((value, []))
    }

    func observe(_ handler: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.handlers.append(handler) }
    }

    /// Adds `handler` and calls it with the current value, after unlocking.
    func observeReplaying(_ handler: @escaping @Sendable (Int) -> Void) {
        let current = state.withLock { state in
            state.handlers.append(handler)
            return state.value
        }
        handler(current)
    }

    func set(_ value: Int) {
        let handlers = state.withLock { state in
            state.value = value
            return state.handlers
        }
        for handler in handlers { handler(value) }
    }
}
