// Scenario 5: contention. Two threads subscribe, broadcast and unsubscribe on the same two
// observables at once; the same total work also runs on one thread. Unit: operations per second
// (higher is better), where one iteration = subscribe + broadcast + unsubscribe = 3 operations.
//
// Each observable has 8 resident observers, so a broadcast reaches 9 or 10. Each thread uses its
// own pool of 16 observers. Deliveries only read an immutable field (`weight`) and hand it to
// `blackHole`, so two threads may deliver to the same observer without a data race.
// NotificationCenter's "two observables" are two notification names on one shared center, the
// way apps share the default center.

import Foundation
import ObserverGraph
import OpenCombine

enum Contention {
    static let family = ScenarioFamily(
        id: "contention",
        summary: "2 threads subscribing/broadcasting/unsubscribing on shared observables vs 1 thread, ops/s",
        run: run)

    static let kit = "kit"
    static let kitTracking = "kit tracking"
    static let openCombine = "OpenCombine"
    static let notificationCenter = "NotificationCenter"
    static let residents = 8
    static let poolSize = 16

    static func scenario(threads: Int) -> String { "contention \(threads) thread\(threads == 1 ? "" : "s")" }

    /// Per-thread counters, written only by their own thread and read after the threads joined.
    final class Tally: @unchecked Sendable {
        let slots = UnsafeMutablePointer<Int>.allocate(capacity: 2)
        init() { slots.initialize(repeating: 0, count: 2) }
        deinit { slots.deallocate() }
        func reset() { slots.update(repeating: 0, count: 2) }
        var sum: Int { slots[0] + slots[1] }
    }

    static func run(plan: Plan, report: Report) {
        progress("contention")
        let iterations = plan.contentionIterations

        // One share of the work: `iterations` rounds of subscribe + broadcast + unsubscribe.
        // `share` (0 or 1) picks the thread's own observer pool and counter.
        typealias Share = @Sendable (Int) -> Void

        let kitShare = makeKitShare(iterations: iterations, pools: makePools { SharedObs(weight: $0) })
        let trackingShare = makeKitShare(
            iterations: iterations, pools: makePools { SharedTrackingObs(weight: $0) })
        let combineShare = makeCombineShare(iterations: iterations)
        let centerShare = makeCenterShare(iterations: iterations)
        let shares: [(String, Share, Tally)] = [
            (kit, kitShare.share, kitShare.tally),
            (kitTracking, trackingShare.share, trackingShare.tally),
            (openCombine, combineShare.share, combineShare.tally),
            (notificationCenter, centerShare.share, centerShare.tally),
        ]

        let operations = Double(3 * iterations * 2)
        var contenders: [Contender] = []
        for threads in [1, 2] {
            for (name, share, tally) in shares {
                contenders.append(
                    Contender(name: "\(threads)|\(name)") {
                        tally.reset()
                        let elapsed: UInt64
                        if threads == 1 {
                            elapsed = timeOnThreads(1) { _ in
                                share(0)
                                share(1)
                            }
                        } else {
                            elapsed = timeOnThreads(2) { index in share(index) }
                        }
                        // Each share counts its successful subscribes and unsubscribes.
                        verify(
                            tally.sum == 2 * 2 * iterations,
                            "\(name): \(tally.sum) of \(4 * iterations) operations")
                        return [operations / (Double(elapsed) / 1e9)]
                    })
            }
        }
        let stats = roundRobin(contenders, samples: plan.contentionSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            let parts = contender.name.split(separator: "|", maxSplits: 1)
            let threads = Int(parts[0])!
            let name = String(parts[1])
            report.add(
                scenario: scenario(threads: threads), implementation: name, stats: result[0],
                unit: "ops/s", reference: name == kit)
        }
        for (name, _, _) in shares {
            guard let one = report.median(scenario(threads: 1), name),
                let two = report.median(scenario(threads: 2), name)
            else { continue }
            report.addDerived(
                DerivedRow(
                    name: "contention 2 threads / 1 thread", implementation: name, value: two / one,
                    unit: "x", detail: "\(formatValue(two)) / \(formatValue(one)) ops/s"))
        }
    }

    private static func makePools<Observer>(_ make: (Int) -> Observer) -> [[Observer]] {
        (0..<2).map { share in (0..<poolSize).map { make(share * poolSize + $0) } }
    }

    private static func makeSubjects() -> [Subject] {
        (0..<2).map { _ in
            let subject = Subject()
            for i in 0..<residents { subject.addObserver(SharedObs(weight: i)) }
            return subject
        }
    }

    private static func makeKitShare<Observer: GraphObserver & Sendable>(
        iterations: Int, pools: [[Observer]]
    ) -> (share: @Sendable (Int) -> Void, tally: Tally) {
        let subjects = makeSubjects()
        // The residents above are held weakly: keep them alive for the whole scenario.
        let residentsKeeper = UncheckedSendable(value: subjects.map { $0.observers })
        let tally = Tally()
        let share: @Sendable (Int) -> Void = { index in
            let pool = pools[index]
            var done = 0
            var delivered = 0
            for i in 0..<iterations {
                let subject = subjects[i & 1]
                let observer = pool[i % poolSize]
                if subject.addObserver(observer) != nil { done &+= 1 }
                delivered &+= subject.broadcast(as: SharedObs.self) { blackHole($0.weight) }
                if subject.removeObserver(observer) != nil { done &+= 1 }
            }
            blackHole(delivered)
            tally.slots[index] = done
            withExtendedLifetime(residentsKeeper) {}
        }
        return (share, tally)
    }

    private static func makeCombineShare(iterations: Int) -> (share: @Sendable (Int) -> Void, tally: Tally) {
        let pools = makePools { SharedObs(weight: $0) }
        var keep: [AnyCancellable] = []
        let subjects = (0..<2).map { _ in
            let subject = PassthroughSubject<Int, Never>()
            for i in 0..<residents {
                let resident = SharedObs(weight: i)
                keep.append(subject.sink { _ in blackHole(resident.weight) })
            }
            return subject
        }
        let shared = UncheckedSendable(value: (subjects, keep))
        let tally = Tally()
        let share: @Sendable (Int) -> Void = { index in
            let subjects = shared.value.0
            let pool = pools[index]
            var done = 0
            for i in 0..<iterations {
                let subject = subjects[i & 1]
                let observer = pool[i % poolSize]
                let handle = subject.sink { _ in blackHole(observer.weight) }
                done &+= 1
                subject.send(1)
                handle.cancel()
                done &+= 1
            }
            tally.slots[index] = done
        }
        return (share, tally)
    }

    private static func makeCenterShare(iterations: Int) -> (share: @Sendable (Int) -> Void, tally: Tally) {
        let pools = makePools { SharedObs(weight: $0) }
        let center = NotificationCenter()
        let names = [
            Notification.Name("ObserverGraphBenchmarks.contention.0"),
            Notification.Name("ObserverGraphBenchmarks.contention.1"),
        ]
        var keep: [any NSObjectProtocol] = []
        for name in names {
            for i in 0..<residents {
                let resident = SharedObs(weight: i)
                keep.append(
                    center.addObserver(forName: name, object: nil, queue: nil) { _ in
                        blackHole(resident.weight)
                    })
            }
        }
        let shared = UncheckedSendable(value: (center, keep))
        let tally = Tally()
        let share: @Sendable (Int) -> Void = { index in
            let center = shared.value.0
            let pool = pools[index]
            var done = 0
            for i in 0..<iterations {
                let name = names[i & 1]
                let observer = pool[i % poolSize]
                let token = center.addObserver(forName: name, object: nil, queue: nil) { _ in
                    blackHole(observer.weight)
                }
                done &+= 1
                center.post(name: name, object: nil)
                center.removeObserver(token)
                done &+= 1
            }
            tally.slots[index] = done
        }
        return (share, tally)
    }
}
