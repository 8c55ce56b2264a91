import ObserverGraph
import Testing

/// A struct that stands for a tracking observer: it answers with the tracker's identity, so
/// every observable takes it for that tracker.
private struct TrackerStandIn: GraphObserver {
    let tracker: Tracker
    var observerID: ObserverID { tracker.observerID }

    func didUnsubscribe(from observable: any GraphObservable) {
        tracker.log?.append("stand-in.didUnsubscribe(\(nameOf(observable)))")
    }
}

@Suite("Observers that share an identity with a tracking observer")
struct SharedIdentityTests {
    @Test("A struct with a tracker's identity removes the tracker's edge on both sides")
    func structStandInRemovesBothSides() {
        let log = EventLog()
        let subject = Subject("S", log: log)
        let tracker = Tracker("T", log: log)
        #expect(subject.addObserver(tracker) === tracker)
        log.clear()

        #expect(subject.removeObserver(TrackerStandIn(tracker: tracker)) != nil)
        #expect(!subject.hasObserver(tracker))
        #expect(tracker.subscriptions.isEmpty)
        #expect(!tracker.isSubscribed(to: subject))
        #expect(log.all == ["stand-in.didUnsubscribe(S)", "S.observer(TrackerStandIn, false)"])
        #expect(GraphNode.consistencyViolations(among: nodes([subject, tracker])).isEmpty)

        // Gone on both sides: a second removal finds nothing, and the tracker comes back whole.
        #expect(subject.removeObserver(TrackerStandIn(tracker: tracker)) == nil)
        #expect(subject.addObserver(tracker) === tracker)
        #expect(names(tracker.subscriptions) == ["S"])
        #expect(GraphNode.consistencyViolations(among: nodes([subject, tracker])).isEmpty)
    }

    @Test("A class with a tracker's identity removes the tracker's edge on both sides")
    func classStandInRemovesBothSides() {
        let log = EventLog()
        let subject = Subject("S", log: log)
        let tracker = Tracker("T", log: log)
        let other = Subject("R", log: log)
        subject.addObserver(tracker)
        other.addObserver(tracker)
        log.clear()

        let standIn = OwnIdentity(tracker.observerID)
        #expect(subject.removeObserver(standIn) === standIn)
        #expect(names(tracker.subscriptions) == ["R"])
        #expect(!subject.hasObserver(tracker) && other.hasObserver(tracker))
        #expect(log.all == ["S.observer(OwnIdentity, false)"])
        #expect(GraphNode.consistencyViolations(among: nodes([subject, other, tracker])).isEmpty)
        #expect(subject.removeObserver(standIn) == nil)
    }

    @Test("A stand-in subscribed first is the tracker to the observable: refused, then removed by it")
    func standInFirst() {
        let log = EventLog()
        let subject = Subject("S", log: log)
        let tracker = Tracker("T", log: log)
        let standIn = OwnIdentity(tracker.observerID)
        #expect(subject.addObserver(standIn) === standIn)
        #expect(subject.hasObserver(tracker))
        #expect(subject.addObserver(tracker) == nil)  // one identity: already subscribed
        #expect(tracker.subscriptions.isEmpty)
        log.clear()

        #expect(subject.removeObserver(tracker) === tracker)
        #expect(!subject.hasObserver(standIn) && subject.observerCount == 0)
        #expect(log.all == ["T.didUnsubscribe(S)", "S.observer(T, false)"])
        #expect(GraphNode.consistencyViolations(among: nodes([subject, tracker])).isEmpty)
        withExtendedLifetime(standIn) {}
    }

    @Test("Stand-ins and their tracker racing to subscribe and remove leave a consistent graph")
    func racingStandIns() {
        let subjects = (0..<4).map { Subject("S\($0)") }
        let tracker = Tracker("T")
        race(threads: 4) { thread in
            for round in 0..<2_000 {
                let subject = subjects[(round &+ thread) % subjects.count]
                switch (round &* 7 &+ thread) % 4 {
                case 0: subject.addObserver(tracker)
                case 1: subject.removeObserver(TrackerStandIn(tracker: tracker))
                case 2: subject.removeObserver(OwnIdentity(tracker.observerID))
                default: subject.removeObserver(tracker)
                }
            }
        }
        #expect(GraphNode.consistencyViolations(among: nodes(subjects + [tracker])).isEmpty)
        let listed = Set(tracker.subscriptions.map { ObjectIdentifier($0) })
        for subject in subjects {
            #expect(subject.hasObserver(tracker) == listed.contains(ObjectIdentifier(subject)))
        }
    }
}

/// An actor that reports its deinit: when a node lets go of an observer's actor.
private actor DeinitReporter {
    let onDeinit: @Sendable () -> Void
    init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// A tracking observer that runs `onDeinit` with its identity as it goes.
private final class DyingTracker: GraphTrackingObserver {
    let graphNode = GraphNode()
    let onDeinit: (ObserverID) -> Void
    init(_ onDeinit: @escaping (ObserverID) -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit(observerID) }
}

extension SharedIdentityTests {
    @Test("A tracker a stand-in removes keeps its actor until its edge is gone on both sides")
    func standInKeepsTrackerActorUntilRemoved() {
        let subject = Subject("S")
        let tracker = Tracker("T")
        let seen = GraphLock<[String]>([])
        do {
            // Its only reference is the node's record of the tracker's actor.
            let actor = DeinitReporter {
                let edge = (subject.hasObserver(tracker), tracker.isSubscribed(to: subject))
                seen.withLock { $0.append("actor released, edge \(edge)") }
            }
            subject.addObserver(tracker, isolation: actor)
            subject.addObserver(Watcher("W"), isolation: nil)
        }
        #expect(seen.withLock { $0 }.isEmpty)
        #expect(subject.removeObserver(OwnIdentity(tracker.observerID)) != nil)
        #expect(seen.withLock { $0 } == ["actor released, edge (false, false)"])
    }

    @Test("A stand-in added while its tracker dies stays when the tracker's node goes")
    func standInAddedWhileTrackerDies() {
        let subject = Subject("S")
        var standIn: OwnIdentity?
        do {
            let tracker = DyingTracker { identity in
                let added = OwnIdentity(identity)
                standIn = added
                #expect(subject.addObserver(added) === added)  // the tracker's entry is dead
            }
            subject.addObserver(tracker)
        }
        guard let standIn else {
            Issue.record("the tracker's deinit did not run")
            return
        }
        #expect(subject.hasObserver(standIn))
        #expect(subject.observerCount == 1)
        #expect(subject.removeObserver(standIn) === standIn)
    }

    @Test("removeAllObservers takes a tracker and a stand-in's entry alike, each on both sides")
    func removeAllWithStandIns() {
        let log = EventLog()
        let subject = Subject("S", log: log)
        let tracker = Tracker("T", log: log)
        let other = Tracker("U", log: log)
        let standIn = OwnIdentity(other.observerID)
        subject.addObserver(tracker)
        subject.addObserver(standIn)
        #expect(subject.addObserver(other) == nil)  // its identity is filed already
        log.clear()
        #expect(names(subject.removeAllObservers()) == ["T", "OwnIdentity"])
        #expect(log.all == ["T.didUnsubscribe(S)", "S.observer(T, false)", "S.observer(OwnIdentity, false)"])
        #expect(tracker.subscriptions.isEmpty && other.subscriptions.isEmpty)
        #expect(subject.observerCount == 0)
        #expect(GraphNode.consistencyViolations(among: nodes([subject, tracker, other])).isEmpty)
    }
}
