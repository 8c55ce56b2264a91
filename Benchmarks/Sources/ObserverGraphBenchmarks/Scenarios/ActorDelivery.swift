// Scenario: values delivered to a closure that lives on the main actor. Unit: nanoseconds per
// value = (time from the first send until the subscriber has seen the last) / K.
//
// Fed from the main actor (the sender runs on the subscriber's actor):
// - kit main-actor closure: `observeValues { }` written on the main actor, `send` made there;
//   delivered synchronously.
// - kit nonisolated closure (the reference): `observeValuesNonisolated { }`, `send` on the same
//   thread: the kit's plain closure delivery.
// Fed from a background thread (one sender thread, the subscriber on the main actor):
// - kit main-actor closure: the same `observeValues { }`; values go through the observer's
//   mailbox, drained on the main actor by one task at a time.
// - kit observe(on: .main): the 0.1.0 way, one `DispatchQueue.main.async` per value.
// - AsyncStream by hand (the reference): `yield` on the sender thread, `for await` on the main
//   actor.
// Every subscriber checks the count and the sum of what it received.
//
// This family needs the main actor free while it waits, so it runs from the benchmark's async
// top level (main.swift), after the synchronous families.

import Dispatch
import ObserverGraph

enum ActorDelivery {
    static let id = "actors"
    static let summary =
        "values to a main-actor closure, fed from main and from another thread, ns per value; a value set from another thread, coalesced, ns per set; an array and a sectioned array filled from another thread, ns per item"

    static let kitMainFromMain = "kit main-actor closure"
    static let kitNonisolated = "kit nonisolated closure"
    static let kitMainFromThread = "kit main-actor closure"
    static let dispatchMain = "kit observe(on: .main)"
    static let asyncStream = "AsyncStream by hand"

    static func fromMainScenario(_ k: Int) -> String { "actor: fed from main K=\(sizeLabel(k))" }
    static func fromThreadScenario(_ k: Int) -> String { "actor: fed from a thread K=\(sizeLabel(k))" }

    @MainActor
    static func run(plan: Plan, report: Report) async {
        let k = plan.asyncElements
        progress(fromMainScenario(k))
        var main: [Double] = []
        var nonisolated: [Double] = []
        for turn in 0..<(plan.asyncSamples + 1) {
            let a = fromMain(k)
            let b = nonisolatedFromSameThread(k)
            if turn > 0 {  // the first turn warms up
                main.append(a)
                nonisolated.append(b)
            }
        }
        report.add(
            scenario: fromMainScenario(k), implementation: kitMainFromMain, stats: Stats(main),
            unit: "ns/value")
        report.add(
            scenario: fromMainScenario(k), implementation: kitNonisolated, stats: Stats(nonisolated),
            unit: "ns/value", reference: true)

        progress(fromThreadScenario(k))
        var kit: [Double] = []
        var dispatch: [Double] = []
        var stream: [Double] = []
        for turn in 0..<(plan.asyncSamples + 1) {
            let a = await kitFromThread(k)
            let b = await dispatchMainFromThread(k)
            let c = await streamFromThread(k)
            if turn > 0 {
                kit.append(a)
                dispatch.append(b)
                stream.append(c)
            }
        }
        report.add(
            scenario: fromThreadScenario(k), implementation: kitMainFromThread, stats: Stats(kit),
            unit: "ns/value")
        report.add(
            scenario: fromThreadScenario(k), implementation: dispatchMain, stats: Stats(dispatch),
            unit: "ns/value")
        report.add(
            scenario: fromThreadScenario(k), implementation: asyncStream, stats: Stats(stream),
            unit: "ns/value",
            reference: true)

        await runValues(plan: plan, report: report)
        await runArrays(plan: plan, report: report)
        await runSections(plan: plan, report: report)
    }

    // MARK: - Fed from the main actor

    /// The closure does what the nonisolated one does (`tally.add`), so that the row compares
    /// deliveries only: a main-actor closure adding to captured variables pays Swift's dynamic
    /// exclusivity checks on them (about 75 instructions each per call), a cost of the closure.
    @MainActor
    private static func fromMain(_ k: Int) -> Double {
        let channel = EventChannel<Int>()
        let tally = Tally()
        let token = channel.observeValues { value in tally.add(value) }
        let start = monotonicNanoseconds()
        for i in 0..<k { channel.send(i) }
        let elapsed = monotonicNanoseconds() - start
        check("fed from main, main-actor closure", count: tally.count, sum: tally.sum, k: k)
        withExtendedLifetime(token) {}
        return Double(elapsed) / Double(k)
    }

    private static func nonisolatedFromSameThread(_ k: Int) -> Double {
        let channel = EventChannel<Int>()
        let tally = Tally()
        let token = channel.observeValuesNonisolated { value in tally.add(value) }
        let start = monotonicNanoseconds()
        for i in 0..<k { channel.send(i) }
        let elapsed = monotonicNanoseconds() - start
        check("fed from main, nonisolated closure", count: tally.count, sum: tally.sum, k: k)
        withExtendedLifetime(token) {}
        return Double(elapsed) / Double(k)
    }

    // MARK: - Fed from a background thread

    @MainActor
    private static func kitFromThread(_ k: Int) async -> Double {
        let channel = EventChannel<Int>()
        var count = 0
        var sum = 0
        var done: CheckedContinuation<Void, Never>?
        let token = channel.observeValues { value in
            count &+= 1
            sum &+= value
            if count == k {
                done?.resume()
                done = nil
            }
        }
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            for i in 0..<k { channel.send(i) }
        }
        // The main actor runs no delivery before this suspends, so `done` is set in time.
        await withCheckedContinuation { done = $0 }
        let elapsed = monotonicNanoseconds() - start
        check("fed from a thread, main-actor closure", count: count, sum: sum, k: k)
        withExtendedLifetime(token) {}
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func dispatchMainFromThread(_ k: Int) async -> Double {
        let channel = EventChannel<Int>()
        let tally = Tally()
        let finished = GraphLock<CheckedContinuation<Void, Never>?>(nil)
        let start = monotonicNanoseconds()
        await withCheckedContinuation { continuation in
            finished.withLock { $0 = continuation }
            let token = channel.observeValues(on: .main) { value in
                if tally.add(value) == k { finished.withLock { $0.take() }?.resume() }
            }
            DispatchQueue.global().async {
                for i in 0..<k { channel.send(i) }
                withExtendedLifetime(token) {}
            }
            tally.keep(token)
        }
        let elapsed = monotonicNanoseconds() - start
        check("fed from a thread, observe(on: .main)", count: tally.count, sum: tally.sum, k: k)
        return Double(elapsed) / Double(k)
    }

    @MainActor
    private static func streamFromThread(_ k: Int) async -> Double {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        var count = 0
        var sum = 0
        let start = monotonicNanoseconds()
        DispatchQueue.global().async {
            for i in 0..<k { continuation.yield(i) }
            continuation.finish()
        }
        for await value in stream {
            count &+= 1
            sum &+= value
        }
        let elapsed = monotonicNanoseconds() - start
        check("fed from a thread, AsyncStream", count: count, sum: sum, k: k)
        return Double(elapsed) / Double(k)
    }

    // MARK: - Helpers

    private static func check(_ what: String, count: Int, sum: Int, k: Int) {
        verify(
            count == k && sum == k &* (k - 1) / 2,
            "actors: \(what) received \(count) values summing to \(sum), expected \(k) summing to \(k &* (k - 1) / 2)"
        )
    }

    /// A count and a sum written from any thread; keeps a token alive until the sample ends.
    private final class Tally: Sendable {
        private let state = GraphLock<(count: Int, sum: Int, tokens: [SubscriptionToken])>((0, 0, []))
        @discardableResult
        func add(_ value: Int) -> Int {
            state.withLock {
                $0.count &+= 1
                $0.sum &+= value
                return $0.count
            }
        }
        func keep(_ token: SubscriptionToken) { state.withLock { $0.tokens.append(token) } }
        var count: Int { state.withLock { $0.count } }
        var sum: Int { state.withLock { $0.sum } }
    }

    // MARK: - Targets

    static let maxRatioFromMain = 1.3
    static let maxRatioToDispatchMain = 0.2
    static let maxRatioToAsyncStream = 1.0

    static func evaluate(_ report: Report, plan: Plan) {
        evaluateValues(report, plan: plan)
        evaluateArrays(report, plan: plan)
        evaluateSections(report, plan: plan)
        let k = plan.asyncElements
        let fromMain = fromMainScenario(k)
        let fromThread = fromThreadScenario(k)
        if let kit = report.median(fromMain, kitMainFromMain),
            let base = report.median(fromMain, kitNonisolated)
        {
            report.addTarget(
                TargetRow(
                    target:
                        "actor fed from main: main-actor closure <= \(formatRatio(maxRatioFromMain)) the nonisolated closure",
                    status: kit / base <= maxRatioFromMain ? .met : .missed,
                    measured: "\(formatValue(kit)) ns / \(formatValue(base)) ns = \(formatRatio(kit / base))")
            )
        }
        if let kit = report.median(fromThread, kitMainFromThread),
            let dispatch = report.median(fromThread, dispatchMain),
            let stream = report.median(fromThread, asyncStream)
        {
            report.addTarget(
                TargetRow(
                    target:
                        "actor fed from a thread: <= \(formatRatio(maxRatioToDispatchMain)) observe(on: .main)",
                    status: kit / dispatch <= maxRatioToDispatchMain ? .met : .missed,
                    measured:
                        "\(formatValue(kit)) ns / \(formatValue(dispatch)) ns = \(formatRatio(kit / dispatch))"
                ))
            report.addTarget(
                TargetRow(
                    target:
                        "actor fed from a thread: <= \(formatRatio(maxRatioToAsyncStream)) AsyncStream on main",
                    status: kit / stream <= maxRatioToAsyncStream ? .met : .missed,
                    measured:
                        "\(formatValue(kit)) ns / \(formatValue(stream)) ns = \(formatRatio(kit / stream))"))
        }
    }
}
