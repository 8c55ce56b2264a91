// Scenario 3: lookup. On an observable with N = 1M observers, `hasObserver` (the observable's
// side) and `isSubscribed(to:)` (the observer's side), for observers that are subscribed and
// for observers that are not, queried in a seeded random order (each sample queries the same
// random selection of 200k of them). Unit: nanoseconds per query. The reference is the bare
// hash lookup a registry cannot beat: a `Set<ObjectIdentifier>` with no lock and no weak
// reference. The hand registry (a dictionary of weak references behind the kit's lock) shows
// what a lock and a weak load add to it, and the weak floor (the `Set` and then a weak load,
// no lock) what holding observers weakly costs at the least. The peers have no such query.

import ObserverGraph

enum Lookup {
    static let family = ScenarioFamily(
        id: "lookup",
        summary: "isSubscribed for present and absent observers at N = 1M, ns per query",
        run: run)

    static let kit = "kit"
    static let kitObserverSide = "kit isSubscribed(to:)"
    static let setLimit = "Set<ObjectIdentifier>"
    static let handRegistry = "hand registry"
    /// The floor of a registry that holds its observers weakly: the `Set` lookup, then (when
    /// found) a load of the observer's weak reference, which is the only way to see that the
    /// entry is still alive. Weak references sit in an array in subscription order.
    static let weakFloor = "limit: Set + weak load"

    static func scenario(present: Bool, _ n: Int) -> String {
        "lookup \(present ? "present" : "absent") N=\(sizeLabel(n))"
    }

    static func run(plan: Plan, report: Report) {
        let n = plan.lookupSize
        progress("lookup N=\(sizeLabel(n))")
        let present = (0..<n).map { _ in Obs() }
        let absent = (0..<n).map { _ in Obs() }
        let subject = Subject()
        for observer in present { subject.addObserver(observer) }
        let set = Set(present.map { ObjectIdentifier($0) })
        let weaks = present.map { Weak(object: $0) }
        let registry = HandRegistry()
        for observer in present { _ = registry.add(observer) }
        let queries = min(n, plan.lookupQueriesPerSample)
        let presentOrder = Array(shuffledPositions(n, seed: 0x100C_0001).prefix(queries))
        let absentOrder = Array(shuffledPositions(n, seed: 0x100C_0002).prefix(queries))

        func kitQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where subject.hasObserver(observers[p]) { hits &+= 1 }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "kit lookup: \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }
        func observerSideQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where observers[p].isSubscribed(to: subject) { hits &+= 1 }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "kit isSubscribed(to:): \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }
        func handQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where registry.contains(observers[p]) { hits &+= 1 }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "hand registry lookup: \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }
        func setQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where set.contains(ObjectIdentifier(observers[p])) { hits &+= 1 }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "set lookup: \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }

        func weakFloorQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where set.contains(ObjectIdentifier(observers[p])) && weaks[p].object != nil {
                hits &+= 1
            }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "weak floor lookup: \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }

        let implementations = [kit, setLimit, kitObserverSide, handRegistry, weakFloor]
        var contenders: [Contender] = []
        for isPresent in [true, false] {
            let observers = isPresent ? present : absent
            let order = isPresent ? presentOrder : absentOrder
            let expected = isPresent ? queries : 0
            let prefix = isPresent ? "present " : "absent "
            contenders += [
                Contender(name: prefix + kit) { kitQueries(observers, order, expected: expected) },
                Contender(name: prefix + setLimit) { setQueries(observers, order, expected: expected) },
                Contender(name: prefix + kitObserverSide) {
                    observerSideQueries(observers, order, expected: expected)
                },
                Contender(name: prefix + handRegistry) { handQueries(observers, order, expected: expected) },
                Contender(name: prefix + weakFloor) {
                    weakFloorQueries(observers, order, expected: expected)
                },
            ]
        }
        let stats = roundRobin(contenders, samples: plan.lookupSamples, warmup: 1)
        for (offset, isPresent) in [true, false].enumerated() {
            for (i, implementation) in implementations.enumerated() {
                report.add(
                    scenario: scenario(present: isPresent, n), implementation: implementation,
                    stats: stats[offset * implementations.count + i][0], unit: "ns/query",
                    reference: implementation == setLimit)
            }
        }
        withExtendedLifetime((present, absent, weaks)) {}
    }
}
