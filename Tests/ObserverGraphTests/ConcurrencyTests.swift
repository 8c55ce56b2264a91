import ObserverGraph
import Testing

/// Counts, per observable, the callbacks it fired and the pings it got: the ledger the stress
/// test balances at the end. A plain observer class...
class LedgerObserver: GraphObserver, @unchecked Sendable {
    let index: Int
    let ledger: Counters

    init(index: Int, ledger: Counters) {
        self.index = index
        self.ledger = ledger
    }

    func didSubscribe(to observable: any GraphObservable) {
        ledger.bump("sub \(index) \((observable as! LedgerSubject).index)")
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        ledger.bump("unsub \(index) \((observable as! LedgerSubject).index)")
    }
}

/// ...and a subclass that adds tracking below it: the kit must still treat it as tracking.
final class LedgerTracker: LedgerObserver, GraphTrackingObserver, @unchecked Sendable {
    let graphNode = GraphNode()
}

func ledgerObserver(index: Int, ledger: Counters, tracking: Bool) -> LedgerObserver {
    tracking ? LedgerTracker(index: index, ledger: ledger) : LedgerObserver(index: index, ledger: ledger)
}

final class LedgerSubject: GraphObservable, @unchecked Sendable {
    let graphNode = GraphNode()
    let index: Int
    let ledger: Counters

    init(index: Int, ledger: Counters) {
        self.index = index
        self.ledger = ledger
    }

    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        let observerIndex = (observer as! LedgerObserver).index
        ledger.bump("\(subscribed ? "joined" : "left") \(observerIndex) \(index)")
    }
}

@Suite("Core: thread safety under concurrent change")
struct ConcurrencyTests {
    @Test("Random concurrent graph changes: consistent graph, exactly-once callbacks", arguments: [1, 2, 3])
    func randomizedStress(seed: UInt64) {
        let ledger = Counters()
        let subjects = (0..<6).map { LedgerSubject(index: $0, ledger: ledger) }
        let observers = (0..<12).map { ledgerObserver(index: $0, ledger: ledger, tracking: $0 % 2 == 0) }
        let threads = 4
        let operations = 4_000
        race(threads: threads) { thread in
            var random = SeededGenerator(seed: seed &* 1_000 &+ UInt64(thread))
            for _ in 0..<operations {
                let subject = subjects.randomElement(using: &random)!
                let observer = observers.randomElement(using: &random)!
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<40: subject.addObserver(observer)
                case 40..<75: subject.removeObserver(observer)
                case 75..<80: subject.removeAllObservers()
                case 80..<85: (observer as? LedgerTracker)?.unsubscribeFromAll()
                case 85..<95:
                    subject.broadcast(as: LedgerObserver.self) { $0.ledger.bump("ping \($0.index)") }
                default:
                    _ = subject.hasObserver(observer)
                    _ = (observer as? LedgerTracker)?.subscriptions.count ?? subject.observers.count
                }
            }
        }

        let trackerNodes = observers.compactMap { ($0 as? LedgerTracker)?.graphNode }
        #expect(trackerNodes.count == 6)
        let allNodes = subjects.map(\.graphNode) + trackerNodes
        #expect(GraphNode.consistencyViolations(among: allNodes).isEmpty, "seed \(seed)")
        var edges = 0
        for observer in observers {
            for subject in subjects {
                let connected = subject.hasObserver(observer) ? 1 : 0
                edges += connected
                let key = "\(observer.index) \(subject.index)"
                // Every successful subscribe and removal fired each callback exactly once.
                #expect(
                    ledger["sub \(key)"] - ledger["unsub \(key)"] == connected, "seed \(seed) edge \(key)")
                #expect(ledger["joined \(key)"] == ledger["sub \(key)"], "seed \(seed) edge \(key)")
                #expect(ledger["left \(key)"] == ledger["unsub \(key)"], "seed \(seed) edge \(key)")
                if let tracker = observer as? LedgerTracker {
                    let listed = tracker.subscriptions.contains { $0 === subject }
                    #expect(listed == (connected == 1), "seed \(seed) edge \(key)")
                }
            }
        }
        let listedEdges = subjects.reduce(0) { $0 + $1.observerCount }
        #expect(listedEdges == edges)
        withExtendedLifetime(observers) {}  // observables hold them weakly
        #expect(ledger["sub 0 0"] + ledger["sub 1 1"] > 0, "the test must actually subscribe")
    }

    @Test("Racing to subscribe the same observer: exactly one wins")
    func subscribeRace() {
        for _ in 0..<100 {
            let ledger = Counters()
            let subject = LedgerSubject(index: 0, ledger: ledger)
            for tracking in [false, true] {
                let observer = ledgerObserver(index: 1, ledger: ledger, tracking: tracking)
                let wins = Counters()
                race(threads: 4) { _ in
                    if subject.addObserver(observer) != nil { wins.bump("win") }
                }
                #expect(wins["win"] == 1)
                let unsubscribed = Counters()
                race(threads: 4) { _ in
                    if subject.removeObserver(observer) != nil { unsubscribed.bump("win") }
                }
                #expect(unsubscribed["win"] == 1)
            }
            #expect(ledger["sub 1 0"] == 2 && ledger["unsub 1 0"] == 2)
            #expect(ledger["joined 1 0"] == 2 && ledger["left 1 0"] == 2)
        }
    }

    @Test("Opposite-order locking: hubs subscribing to each other from two threads never deadlock")
    func noDeadlockBetweenHubs() {
        let hubs = (0..<4).map { Hub("H\($0)") }
        race(threads: 4) { thread in
            for i in 0..<3_000 {
                let a = hubs[(thread + i) % 4]
                let b = hubs[(thread + 3 * i + 1) % 4]
                if i % 3 == 0 {
                    a.addObserver(b)
                } else if i % 3 == 1 {
                    b.addObserver(a)
                } else {
                    a.unsubscribeFromAll()
                }
            }
        }
        #expect(GraphNode.consistencyViolations(among: nodes(hubs)).isEmpty)
        for a in hubs {
            for b in hubs {
                #expect(a.hasObserver(b) == b.subscriptions.contains { $0 === a })
            }
        }
    }

    @Test("A consistency audit taken while other threads change the graph always sees a consistent cut")
    func auditDuringChange() {
        let ledger = Counters()
        let subjects = (0..<4).map { LedgerSubject(index: $0, ledger: ledger) }
        let trackers = (0..<4).map { LedgerTracker(index: $0, ledger: ledger) }
        let allNodes = subjects.map(\.graphNode) + trackers.map(\.graphNode)
        let problems = Counters()
        race(threads: 3) { thread in
            var random = SeededGenerator(seed: UInt64(thread) + 42)
            for _ in 0..<2_000 {
                if thread == 0 {
                    let found = GraphNode.consistencyViolations(among: allNodes)
                    problems.bump("violations", by: found.count)
                } else {
                    let subject = subjects.randomElement(using: &random)!
                    let tracker = trackers.randomElement(using: &random)!
                    if Bool.random(using: &random) {
                        subject.addObserver(tracker)
                    } else {
                        tracker.unsubscribeFromAll()
                    }
                }
            }
        }
        #expect(problems["violations"] == 0)
    }

    @Test("An audit and a snapshot taken while struct observers join and leave read a consistent cut")
    func auditWhileStructObserversChange() {
        // A struct observer is kept in a box that its observable holds; the audit and the
        // snapshot read the boxes they captured after unlocking, while the other thread goes on
        // adding and removing them (a copy of the live boxes once crashed here, and the thread
        // sanitizer saw the race).
        let subject = Subject("S")
        let node = subject.graphNode
        let problems = Counters()
        race(threads: 2) { thread in
            if thread == 0 {
                for round in 0..<6_000 {
                    let observer = KeyedObserver(observerID: ObserverID(), payload: nil)
                    if subject.addObserver(observer) == nil { problems.bump("add") }
                    if round % 3 != 0, subject.removeObserver(observer) == nil { problems.bump("remove") }
                }
            } else {
                for round in 0..<1_000 {
                    problems.bump("violations", by: GraphNode.consistencyViolations(among: [node]).count)
                    if round % 100 == 0, !GraphSnapshot(observables: [subject]).isConsistent {
                        problems.bump("snapshot")
                    }
                }
            }
        }
        #expect(problems["add"] == 0 && problems["remove"] == 0)
        #expect(problems["violations"] == 0 && problems["snapshot"] == 0)
        #expect(subject.observerCount == 2_000)
    }

    @Test("After unsubscribe returns, broadcasts that start later on any thread never call the observer")
    func crossThreadRemoval() {
        for _ in 0..<20 {
            let subject = Subject("O")
            let target = Watcher("X")
            let others = (0..<8).map { Watcher("W\($0)") }
            for watcher in others.prefix(4) { subject.addObserver(watcher) }
            subject.addObserver(target)
            for watcher in others.suffix(4) { subject.addObserver(watcher) }
            let removed = GraphLock(false)
            let violations = Counters()
            race(threads: 3) { thread in
                if thread == 0 {
                    for _ in 0..<200 { subject.broadcast(as: Watcher.self) { _ in } }
                    subject.removeObserver(target)
                    removed.withLock { $0 = true }
                } else {
                    for _ in 0..<2_000 {
                        let startedAfterRemoval = removed.withLock { $0 }
                        subject.broadcast(as: Watcher.self) { watcher in
                            if startedAfterRemoval && watcher === target { violations.bump("late call") }
                        }
                    }
                }
            }
            #expect(violations["late call"] == 0)
            #expect(subject.observerCount == 8)
            withExtendedLifetime((others, target)) {}
        }
    }

    @Test("Concurrent broadcasts while observers join and leave: each delivery reaches a live observer")
    func broadcastsDuringChurn() {
        let subject = Subject("O")
        let stable = (0..<16).map { Watcher("S\($0)") }
        for watcher in stable { subject.addObserver(watcher) }
        let deliveries = Counters()
        race(threads: 4) { thread in
            if thread < 2 {
                for _ in 0..<500 {
                    let count = subject.broadcast(as: Watcher.self) { watcher in
                        if watcher.name.hasPrefix("S") { deliveries.bump("stable") }
                    }
                    deliveries.bump("at least stable", by: count >= 16 ? 1 : 0)
                }
            } else {
                for i in 0..<2_000 {
                    let churner = Watcher("C\(thread)-\(i)")
                    subject.addObserver(churner)
                    subject.removeObserver(churner)
                }
            }
        }
        #expect(deliveries["stable"] == 2 * 500 * 16)
        #expect(deliveries["at least stable"] == 1_000)
        #expect(subject.observerCount == 16)
        withExtendedLifetime(stable) {}
    }
}
