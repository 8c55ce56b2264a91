// Scenario 4: memory per subscription edge at N = 1M. Unit: bytes per edge = (malloc bytes in
// use after subscribing all N) - (before), divided by N. Malloc bytes in use are glibc's
// mallinfo2() uordblks + hblkhd (heap chunks plus mmapped chunks, where large buffers go), so
// they include the allocator's per-chunk overhead.
//
// The observers are created BEFORE the first reading and were never referenced weakly, so the
// kit's number INCLUDES the weak-reference side table that the first weak reference to each
// object allocates. The row "side table only" shows that part alone.

import Foundation
import ObserverGraph
import OpenCombine

enum Memory {
    static let family = ScenarioFamily(
        id: "memory",
        summary: "malloc bytes per subscription edge at N = 1M, side tables included",
        run: run)

    static let kit = "kit"
    static let kitTracking = "kit tracking"
    static let weakArray = "[Weak] array"
    static let sideTable = "side table only"
    static let openCombine = "OpenCombine"
    static let notificationCenter = "NotificationCenter"

    static func scenario(_ n: Int) -> String { "memory N=\(sizeLabel(n))" }

    static func run(plan: Plan, report: Report) {
        let n = plan.memorySize
        progress("memory N=\(sizeLabel(n))")
        guard MallocStats.available else {
            print("  skipped: this platform's allocator does not report bytes in use")
            return
        }

        /// Bytes per edge of what `body` allocates and keeps until it returns. `alive` (the
        /// observers, the observable) is kept alive until after the second reading: Swift may
        /// otherwise release an object right after its last use, before the reading.
        func bytesPerEdge<Alive, Kept>(keeping alive: Alive, _ body: () -> Kept) -> Double {
            withExtendedLifetime(alive) {
                let before = MallocStats.bytesInUse()
                let kept = body()
                let after = MallocStats.bytesInUse()
                withExtendedLifetime(kept) {}
                return Double(after - before) / Double(n)
            }
        }

        let contenders = [
            Contender(name: kit) {
                let observers = (0..<n).map { _ in Obs() }
                let subject = Subject()
                let bytes = bytesPerEdge(keeping: (observers, subject)) {
                    for observer in observers { subject.addObserver(observer) }
                }
                withExtendedLifetime(observers) {
                    verify(
                        subject.observerCount == n, "kit memory: \(subject.observerCount) observers of \(n)")
                }
                return [bytes]
            },
            Contender(name: kitTracking) {
                let observers = (0..<n).map { _ in TrackingObs() }
                let subject = Subject()
                let bytes = bytesPerEdge(keeping: (observers, subject)) {
                    for observer in observers { subject.addObserver(observer) }
                }
                withExtendedLifetime(observers) {
                    verify(
                        subject.observerCount == n, "kit tracking memory: \(subject.observerCount) of \(n)")
                }
                return [bytes]
            },
            Contender(name: weakArray) {
                // The hand-written non-owning list: what a registry needs at the very least.
                let observers = (0..<n).map { _ in Obs() }
                return [
                    bytesPerEdge(keeping: observers) { () -> [Weak] in
                        var array: [Weak] = []
                        for observer in observers { array.append(Weak(object: observer)) }
                        return array
                    }
                ]
            },
            Contender(name: sideTable) {
                let observers = (0..<n).map { _ in Obs() }
                var array = [Weak](repeating: Weak(object: nil), count: n)
                let bytes = bytesPerEdge(keeping: observers) {
                    for i in observers.indices { array[i].object = observers[i] }
                }
                withExtendedLifetime(array) {}
                return [bytes]
            },
            Contender(name: openCombine) {
                // The AnyCancellable a Combine user must keep counts: without it there is no
                // subscription.
                let observers = (0..<n).map { _ in Obs() }
                let subject = PassthroughSubject<Int, Never>()
                let bytes = bytesPerEdge(keeping: (observers, subject)) { () -> [AnyCancellable] in
                    var handles: [AnyCancellable] = []
                    for observer in observers { handles.append(subject.sink { observer.receive($0) }) }
                    return handles
                }
                return [bytes]
            },
            Contender(name: notificationCenter) {
                // The tokens are kept, as a user must to remove the observers later.
                let observers = (0..<n).map { _ in Obs() }
                let center = NotificationCenter()
                let name = Notification.Name("ObserverGraphBenchmarks.memory")
                let bytes = bytesPerEdge(keeping: (observers, center)) { () -> [any NSObjectProtocol] in
                    var tokens: [any NSObjectProtocol] = []
                    for observer in observers {
                        let target = UncheckedSendable(value: observer)
                        tokens.append(
                            center.addObserver(forName: name, object: nil, queue: nil) { note in
                                target.value.receive(note.object as? Int ?? 0)
                            })
                    }
                    return tokens
                }
                return [bytes]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.memorySamples, warmup: 0)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0], unit: "B/edge",
                reference: contender.name == weakArray,
                note: contender.name == kit || contender.name == kitTracking
                    ? "includes the observers' weak-reference side tables" : nil)
        }
    }
}
