// Scenario 3: lookup. `isSubscribed` on an observable with N = 1M observers, for observers that
// are subscribed and for observers that are not, queried in a seeded random order (each sample
// queries the same random selection of 200k of them). Unit:
// nanoseconds per query. The reference is the bare hash lookup a registry cannot beat: a
// `Set<ObjectIdentifier>` with no lock and no weak reference. The peers have no such query.

import ObserverGraph

enum Lookup {
    static let family = ScenarioFamily(
        id: "lookup",
        summary: "isSubscribed for present and absent observers at N = 1M, ns per query",
        run: run)

    static let kit = "kit"
    static let setLimit = "Set<ObjectIdentifier>"

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
        func setQueries(_ observers: [Obs], _ order: [Int], expected: Int) -> [Double] {
            var hits = 0
            let start = monotonicNanoseconds()
            for p in order where set.contains(ObjectIdentifier(observers[p])) { hits &+= 1 }
            let elapsed = monotonicNanoseconds() - start
            verify(hits == expected, "set lookup: \(hits) hits, expected \(expected)")
            return [Double(elapsed) / Double(order.count)]
        }

        let contenders = [
            Contender(name: "present " + kit) { kitQueries(present, presentOrder, expected: queries) },
            Contender(name: "present " + setLimit) { setQueries(present, presentOrder, expected: queries) },
            Contender(name: "absent " + kit) { kitQueries(absent, absentOrder, expected: 0) },
            Contender(name: "absent " + setLimit) { setQueries(absent, absentOrder, expected: 0) },
        ]
        let stats = roundRobin(contenders, samples: plan.lookupSamples, warmup: 1)
        for isPresent in [true, false] {
            let offset = isPresent ? 0 : 2
            report.add(
                scenario: scenario(present: isPresent, n), implementation: kit, stats: stats[offset][0],
                unit: "ns/query")
            report.add(
                scenario: scenario(present: isPresent, n), implementation: setLimit,
                stats: stats[offset + 1][0], unit: "ns/query", reference: true)
        }
        withExtendedLifetime((present, absent)) {}
    }
}
