// Scenario 2: subscribe + unsubscribe churn. N observers (created before any timing) subscribe
// to one fresh observable, then all unsubscribe again. Unit: nanoseconds per operation, for
// each phase separately.
//
// The three orders:
// - in order: subscribe 0, 1, ..., N-1; unsubscribe oldest first (0, 1, ...).
// - reverse:  subscribe N-1, ..., 0;    unsubscribe newest first (0, 1, ...).
// - random:   subscribe in one seeded shuffle, unsubscribe in another.
// So the subscribe phases touch the objects in ascending, descending and random address order,
// and the unsubscribe phases remove first-in-first-out, last-in-first-out and at random.
//
// Each sample uses fresh observables, so it includes the registry's growth. The observers'
// weak-reference side tables already exist after the warm-up sample (the memory scenario counts
// them). Small N repeat the cycle within a sample to reach a measurable duration.

import Foundation
import ObserverGraph
import OpenCombine

enum Churn {
    static let family = ScenarioFamily(
        id: "churn",
        summary: "subscribe-all then unsubscribe-all at N = 1k, 100k, 1M, in three orders, ns per operation",
        run: run)

    static let kit = "kit"
    static let kitTracking = "kit tracking"
    /// Plain observers subscribed as a main-actor caller does: the kit records each one's actor
    /// (for `post(as:)`), which a nonisolated caller's subscribe skips.
    static let kitActor = "kit, main-actor observers"
    static let openCombine = "OpenCombine"
    static let notificationCenter = "NotificationCenter"
    static let handRegistry = "hand registry"
    /// `handRegistry` whose removal reports only a live entry that is this very observer, as the
    /// kit's does (see `HandRegistry.removeChecked`): the hand-written peer with the kit's answer.
    static let handChecked = "hand registry, removal checked"
    /// `handRegistry` with each edge also recorded in the observer's own locked list: what a
    /// tracking edge costs a hand-written registry (see `HandTrackingRegistry`).
    static let handTracking = "hand registry, tracking"
    /// The floor of holding observers weakly: only the weak references are made and destroyed
    /// (appended in order, destroyed where they are: no index, no lock, no duplicate check).
    static let weakFloor = "limit: weak references only"
    /// The floor of finding observers by identity: `Set<ObjectIdentifier>` insert and remove.
    static let indexFloor = "limit: Set<ObjectIdentifier> only"
    /// What a tracking edge adds beyond its weak reference: one more lock taken and released
    /// (the tracker's node), uncontended.
    static let lockFloor = "limit: one lock round trip"
    /// The floor of a tracking edge with its second side in a node of its own: the kit's plain
    /// edge, on observers that each own an object of a node's size allocated right after them
    /// (`NodeFloorObs`), preceded by a lock round trip on that object. Recording the edge on the
    /// tracker's side must reach the tracker's node, whose address is in the tracker, and lock
    /// it before the edge changes: where neither is in the cache (random order at 100k and 1M),
    /// that is a memory fetch which cannot start before the tracker's own has ended, and which
    /// nothing else overlaps. (A read of the node alone, without that dependency and that
    /// order, measured 28 to 47 ns at random: such reads overlap one another.)
    static let nodeFloor = "limit: kit plain + the tracker's node reached and locked first"

    enum Order: String, CaseIterable {
        case inOrder = "in-order"
        case reverse = "reverse"
        case random = "random"
    }

    enum Phase: String, CaseIterable {
        case subscribe
        case unsubscribe
    }

    static func scenario(_ phase: Phase, _ order: Order, _ n: Int) -> String {
        "churn \(phase.rawValue) \(order.rawValue) N=\(sizeLabel(n))"
    }

    static func run(plan: Plan, report: Report) {
        for n in plan.churnSizes {
            // Created once per size, before any timing, and shared by every order.
            let plain = (0..<n).map { _ in Obs() }
            let tracking = (0..<n).map { _ in TrackingObs() }
            let handTrackers = (0..<n).map { _ in HandTrackingObs() }
            let floorObservers = (0..<n).map { _ in NodeFloorObs() }
            for order in Order.allCases {
                progress("churn \(order.rawValue) N=\(sizeLabel(n))")
                measure(
                    n: n, order: order, plain: plain, tracking: tracking, handTrackers: handTrackers,
                    floorObservers: floorObservers, plan: plan, report: report)
            }
        }
        for n in plan.churnSizes where n <= plan.churnPeerLimit {
            ChurnFirstWeak.measure(n: n, plan: plan, report: report)
        }
        addScaling(plan: plan, report: report)
    }

    /// The positions to subscribe in and to unsubscribe in, for an order.
    static func positions(_ order: Order, _ n: Int) -> (subscribe: [Int], unsubscribe: [Int]) {
        switch order {
        case .inOrder: return (Array(0..<n), Array(0..<n))
        case .reverse: return (Array((0..<n).reversed()), Array(0..<n))
        case .random:
            return (shuffledPositions(n, seed: 0x5EED_0001), shuffledPositions(n, seed: 0x5EED_0002))
        }
    }

    private static func measure(
        n: Int, order: Order, plain: [Obs], tracking: [TrackingObs], handTrackers: [HandTrackingObs],
        floorObservers: [NodeFloorObs], plan: Plan, report: Report
    ) {
        let (subscribeOrder, unsubscribeOrder) = positions(order, n)
        let cycles = max(1, plan.churnOperationsPerSample / n)

        /// Runs `cycles` cycles; `cycle` returns (subscribe ns, unsubscribe ns) of one cycle.
        func sample(_ cycle: () -> (UInt64, UInt64)) -> [Double] {
            var subscribing: UInt64 = 0
            var unsubscribing: UInt64 = 0
            for _ in 0..<cycles {
                let (s, u) = cycle()
                subscribing += s
                unsubscribing += u
            }
            let operations = Double(n * cycles)
            return [Double(subscribing) / operations, Double(unsubscribing) / operations]
        }

        var contenders = [
            Contender(name: kit) {
                sample {
                    let subject = Subject()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder where subject.addObserver(plain[p]) != nil { done &+= 1 }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder where subject.removeObserver(plain[p]) != nil { done &+= 1 }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "kit churn: \(done) of \(2 * n) operations succeeded")
                    return (middle - start, end - middle)
                }
            },
            Contender(name: kitTracking) {
                sample {
                    let subject = Subject()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder where subject.addObserver(tracking[p]) != nil { done &+= 1 }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder where subject.removeObserver(tracking[p]) != nil { done &+= 1 }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "kit tracking churn: \(done) of \(2 * n) operations succeeded")
                    verify(tracking[0].subscriptionCount == 0, "a tracking observer kept a subscription")
                    return (middle - start, end - middle)
                }
            },
            Contender(name: kitActor) {
                sample {
                    let subject = Subject()
                    let actor = MainActor.shared  // what `#isolation` passes on the main actor
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder where subject.addObserver(plain[p], isolation: actor) != nil {
                        done &+= 1
                    }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder where subject.removeObserver(plain[p]) != nil { done &+= 1 }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "kit actor churn: \(done) of \(2 * n) operations succeeded")
                    return (middle - start, end - middle)
                }
            },
        ]
        // The hand registry, its removal unchecked and checked (the loops differ in the call
        // only, so that the two rows differ in the check only).
        for checked in [false, true] {
            contenders.append(
                Contender(name: checked ? handChecked : handRegistry) {
                    sample {
                        let registry = HandRegistry()
                        var done = 0
                        let start = monotonicNanoseconds()
                        for p in subscribeOrder where registry.add(plain[p]) { done &+= 1 }
                        let middle = monotonicNanoseconds()
                        if checked {
                            for p in unsubscribeOrder where registry.removeChecked(plain[p]) { done &+= 1 }
                        } else {
                            for p in unsubscribeOrder where registry.remove(plain[p]) { done &+= 1 }
                        }
                        let end = monotonicNanoseconds()
                        verify(done == 2 * n, "hand registry churn: \(done) of \(2 * n) operations succeeded")
                        return (middle - start, end - middle)
                    }
                })
        }
        contenders.append(
            Contender(name: handTracking) {
                sample {
                    let registry = HandTrackingRegistry()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder where registry.add(handTrackers[p]) { done &+= 1 }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder where registry.remove(handTrackers[p]) { done &+= 1 }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "hand tracking churn: \(done) of \(2 * n) operations succeeded")
                    verify(handTrackers[0].subscriptionCount == 0, "a hand tracking observer kept an entry")
                    return (middle - start, end - middle)
                }
            })
        // The two floors of a registry that holds its observers weakly and finds them by
        // identity, each measured alone. Any such registry does at least the work of both.
        var weakPositions = [Int](repeating: 0, count: n)
        contenders.append(
            Contender(name: weakFloor) {
                sample {
                    var slots = ContiguousArray<Weak>()
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder {
                        weakPositions[p] = slots.count
                        slots.append(Weak(object: plain[p]))
                    }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder { slots[weakPositions[p]].object = nil }
                    let end = monotonicNanoseconds()
                    verify(
                        slots.count == n && slots[n - 1].object == nil, "weak floor: \(slots.count) of \(n)")
                    return (middle - start, end - middle)
                }
            })
        contenders.append(
            Contender(name: indexFloor) {
                sample {
                    var index = Set<ObjectIdentifier>()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder where index.insert(ObjectIdentifier(plain[p])).inserted {
                        done &+= 1
                    }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder where index.remove(ObjectIdentifier(plain[p])) != nil {
                        done &+= 1
                    }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "index floor: \(done) of \(2 * n) operations succeeded")
                    return (middle - start, end - middle)
                }
            })
        contenders.append(
            Contender(name: nodeFloor) {
                sample {
                    let subject = Subject()
                    var done = 0
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder {
                        let observer = floorObservers[p]
                        observer.node.withLock { $0.edges &+= 1 }
                        if subject.addObserver(observer) != nil { done &+= 1 }
                    }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder {
                        let observer = floorObservers[p]
                        observer.node.withLock { $0.edges &-= 1 }
                        if subject.removeObserver(observer) != nil { done &+= 1 }
                    }
                    let end = monotonicNanoseconds()
                    verify(done == 2 * n, "node floor: \(done) of \(2 * n) operations succeeded")
                    let kept = floorObservers[0].node.withLock { $0.edges }
                    verify(kept == 0, "node floor: \(kept) edges counted at the end")
                    return (middle - start, end - middle)
                }
            })
        let lock = GraphLock(0)
        contenders.append(
            Contender(name: lockFloor) {
                sample {
                    let start = monotonicNanoseconds()
                    for p in subscribeOrder { lock.withLock { $0 &+= p } }
                    let middle = monotonicNanoseconds()
                    for p in unsubscribeOrder { lock.withLock { $0 &-= p } }
                    let end = monotonicNanoseconds()
                    verify(lock.withLock { $0 } == 0, "lock floor: the sum did not return to 0")
                    return (middle - start, end - middle)
                }
            })
        if n <= plan.churnPeerLimit {
            contenders.append(
                Contender(name: openCombine) {
                    // A Combine user keeps each subscription's AnyCancellable and drops it to
                    // unsubscribe (its deinit cancels), so both are part of the measured work.
                    var handles = [AnyCancellable?](repeating: nil, count: n)
                    return sample {
                        let subject = PassthroughSubject<Int, Never>()
                        let start = monotonicNanoseconds()
                        for p in subscribeOrder {
                            let observer = plain[p]
                            handles[p] = subject.sink { observer.receive($0) }
                        }
                        let middle = monotonicNanoseconds()
                        for p in unsubscribeOrder { handles[p] = nil }
                        let end = monotonicNanoseconds()
                        return (middle - start, end - middle)
                    }
                })
            contenders.append(
                Contender(name: notificationCenter) {
                    let name = Notification.Name("ObserverGraphBenchmarks.churn")
                    var handles = [(any NSObjectProtocol)?](repeating: nil, count: n)
                    return sample {
                        let center = NotificationCenter()
                        let start = monotonicNanoseconds()
                        for p in subscribeOrder {
                            let target = UncheckedSendable(value: plain[p])
                            handles[p] = center.addObserver(forName: name, object: nil, queue: nil) { note in
                                target.value.receive(note.object as? Int ?? 0)
                            }
                        }
                        let middle = monotonicNanoseconds()
                        for p in unsubscribeOrder {
                            center.removeObserver(handles[p]!)
                            handles[p] = nil
                        }
                        let end = monotonicNanoseconds()
                        return (middle - start, end - middle)
                    }
                })
        }

        let samples = n >= plan.largeSize ? plan.churnSamplesAtLargest : plan.churnSamples
        let stats = roundRobin(contenders, samples: samples, warmup: plan.churnWarmup)
        for (phaseIndex, phase) in Phase.allCases.enumerated() {
            for (contender, result) in zip(contenders, stats) {
                report.add(
                    scenario: scenario(phase, order, n), implementation: contender.name,
                    stats: result[phaseIndex], unit: "ns/op", reference: contender.name == kit)
            }
        }
    }

    /// The cost at the largest N divided by the cost at the smallest: 1.0 is perfectly flat
    /// (O(1) per operation at every size).
    private static func addScaling(plan: Plan, report: Report) {
        guard let small = plan.churnSizes.min(), let large = plan.churnSizes.max(), large > small else {
            return
        }
        for phase in Phase.allCases {
            for order in Order.allCases {
                for implementation in [
                    kit, kitTracking, kitActor, handRegistry, handTracking, weakFloor, indexFloor,
                    openCombine, notificationCenter,
                ] {
                    guard let big = report.median(scenario(phase, order, large), implementation),
                        let little = report.median(scenario(phase, order, small), implementation)
                    else { continue }
                    report.addDerived(
                        DerivedRow(
                            name:
                                "churn \(phase.rawValue) \(order.rawValue) \(sizeLabel(large))/\(sizeLabel(small))",
                            implementation: implementation, value: big / little, unit: "x",
                            detail: "\(formatValue(big)) / \(formatValue(little)) ns/op"))
                }
            }
        }
    }
}
