import ObserverGraph
import Testing

@Suite("Core: ownership, deallocation and leaks")
struct OwnershipTests {
    @Test("An observable never keeps a class observer alive; a dead observer is never called")
    func observableHoldsObserversWeakly() {
        let deinits = Counters()
        let subject = Subject("O")
        weak var weakWatcher: Watcher?
        do {
            let watcher = Watcher("W", deinits: deinits)
            weakWatcher = watcher
            subject.addObserver(watcher)
            subject.addObserver(Watcher("Other", deinits: deinits))
        }
        #expect(weakWatcher == nil)
        #expect(deinits["W"] == 1 && deinits["Other"] == 1)
        #expect(subject.observerCount == 0)
        #expect(subject.observers.isEmpty)
        #expect(subject.broadcast(as: Watcher.self) { _ in Issue.record("called a dead observer") } == 0)
        #expect(GraphNode.consistencyViolations(among: [subject.graphNode]).isEmpty)
    }

    @Test("Tracking observer and observable hold each other weakly: no cycle either way")
    func noCycleBetweenTrackerAndObservable() {
        let deinits = Counters()
        weak var weakSubject: Subject?
        weak var weakTracker: Tracker?
        do {
            let subject = Subject("O", deinits: deinits)
            let tracker = Tracker("T", deinits: deinits)
            weakSubject = subject
            weakTracker = tracker
            subject.addObserver(tracker)
        }
        #expect(weakSubject == nil && weakTracker == nil)
        #expect(deinits["O"] == 1 && deinits["T"] == 1)
    }

    @Test("Hubs observing each other in a ring are all deallocated")
    func ringOfHubs() {
        let deinits = Counters()
        weak var first: Hub?
        do {
            let hubs = (0..<5).map { Hub("H\($0)", deinits: deinits) }
            for i in hubs.indices {
                hubs[i].addObserver(hubs[(i + 1) % hubs.count])
                hubs[i].addObserver(hubs[i])
            }
            first = hubs[0]
            #expect(GraphNode.consistencyViolations(among: nodes(hubs)).isEmpty)
        }
        #expect(first == nil)
        #expect((0..<5).allSatisfy { deinits["H\($0)"] == 1 })
    }

    @Test("A tracking observer that unsubscribes itself in its deinit fires nothing, also mid-delivery")
    func trackerLeavingInDeinit() {
        // Released with no delivery running: its removal finds it deallocating, like any other.
        let log = EventLog()
        let observable = JoinHook(log: log)
        var tracker: SelfRemovingTracker? = SelfRemovingTracker(observable, log: log)
        observable.addObserver(tracker!)
        log.clear()
        tracker = nil
        #expect(log.all == ["removeObserver(self) -> false"])
        #expect(observable.observers.isEmpty)
        // Released inside the observable's own callback (its delivery runs): nothing is queued
        // for the dying tracker, and the process survives it.
        var second: SelfRemovingTracker? = SelfRemovingTracker(observable, log: log)
        observable.addObserver(second!)
        observable.onJoin = { second = nil }
        log.clear()
        let watcher = Watcher("W")
        observable.addObserver(watcher)
        #expect(log.all == ["O.observer(joined)", "removeObserver(self) -> false"])
        #expect(observable.observers.count == 1)
        #expect(GraphNode.consistencyViolations(among: [observable.graphNode]).isEmpty)
        withExtendedLifetime(watcher) {}
    }

    @Test("A deallocated tracking observer's edges disappear from every observable")
    func trackerDeallocationRemovesEdges() {
        let log = EventLog()
        let a = Subject("A", log: log)
        let b = Subject("B", log: log)
        let keep = Watcher("W")
        a.addObserver(keep)
        do {
            let tracker = Tracker("T")
            a.addObserver(tracker)
            b.addObserver(tracker)
            #expect(a.observerCount == 2 && b.observerCount == 1)
        }
        #expect(names(a.observers) == ["W"])
        #expect(b.observers.isEmpty)
        #expect(a.observerCount == 1 && b.observerCount == 0)
        // Deallocation is not an unsubscribe: no callback could be given the dead observer.
        #expect(log.count("A.observer(T, false)") == 0)
        #expect(GraphNode.consistencyViolations(among: nodes([a, b])).isEmpty)
    }

    @Test("A deallocated observable disappears from every tracking observer's subscriptions")
    func observableDeallocationRemovesEdges() {
        let log = EventLog()
        let tracker = Tracker("T", log: log)
        let hub = Hub("H", log: log)
        let keep = Subject("Keep")
        keep.addObserver(tracker)
        do {
            let gone = Subject("Gone")
            gone.addObserver(tracker)
            gone.addObserver(hub)
            #expect(tracker.subscriptionCount == 2)
        }
        #expect(names(tracker.subscriptions) == ["Keep"])
        #expect(hub.subscriptions.isEmpty)
        #expect(tracker.subscriptionCount == 1 && hub.subscriptionCount == 0)
        #expect(log.count("T.didUnsubscribe(Gone)") == 0)
        #expect(GraphNode.consistencyViolations(among: nodes([tracker, hub, keep])).isEmpty)
    }

    @Test("A struct observer is kept until unsubscribed, then released (and what it owns)")
    func structObserverReleasedOnUnsubscribe() {
        let deinits = Counters()
        let subject = Subject("O")
        let observer = PayloadObserver(payload: Payload(deinits: deinits))
        subject.addObserver(observer)
        let id = observer.observerID
        _ = consume observer
        #expect(deinits["payload"] == 0)
        var seen: [ObserverID] = []
        subject.broadcast(as: PayloadObserver.self) { seen.append($0.observerID) }
        #expect(seen == [id])
        #expect(subject.removeAllObservers().count == 1)
        #expect(deinits["payload"] == 1)
    }

    @Test("Struct observers are released when their observable is deallocated")
    func structObserverReleasedWithObservable() {
        let deinits = Counters()
        do {
            let subject = Subject("O")
            for _ in 0..<3 { subject.addObserver(PayloadObserver(payload: Payload(deinits: deinits))) }
            #expect(deinits["payload"] == 0)
        }
        #expect(deinits["payload"] == 3)
    }

    @Test(
        "What the kit releases may call back into the kit: it is released with no lock held",
        .timeLimit(.minutes(3)))
    func releaseRunsWithoutLock() {
        let deinits = Counters()
        let subject = Subject("O")
        let probe = Watcher("Probe")
        subject.addObserver(probe)
        // The payload's deinit queries and changes the same observable. Were it released under
        // the observable's lock, this would deadlock (the lock is not recursive).
        subject.addObserver(
            PayloadObserver(
                payload: Payload(deinits: deinits) {
                    _ = subject.hasObserver(probe)
                    subject.removeObserver(probe)
                }))
        #expect(subject.observerCount == 2)
        let removed = subject.removeAllObservers()
        #expect(removed.count == 2)
        _ = consume removed
        #expect(deinits["payload"] == 1)

        // Unsubscribing by identity alone, so that the kit's copy is the last owner of the payload.
        subject.addObserver(probe)
        let id = ObserverID()
        subject.addObserver(
            KeyedObserver(
                observerID: id, payload: Payload(deinits: deinits) { subject.removeObserver(probe) }))
        #expect(deinits["payload"] == 1)
        #expect(subject.removeObserver(KeyedObserver(observerID: id, payload: nil)) != nil)
        #expect(deinits["payload"] == 2)
        #expect(subject.observers.isEmpty)
    }

    @Test("A new object at a dead observer's address is a new observer, not a duplicate")
    func addressReuseAfterDeallocation() {
        let subject = Subject("O")
        var identities = Set<ObserverID>()
        for round in 0..<200 {
            let watcher = Watcher("W\(round)")
            identities.insert(watcher.observerID)
            #expect(!subject.hasObserver(watcher))
            #expect(subject.addObserver(watcher) === watcher)
            #expect(subject.hasObserver(watcher))
        }
        // Addresses were reused (that is what this test is about) and no subscribe was refused.
        #expect(identities.count < 200)
        #expect(subject.observerCount == 0)
        #expect(GraphNode.consistencyViolations(among: [subject.graphNode]).isEmpty)
    }

    @Test("Observers that die without unsubscribing do not pile up")
    func deadObserversArePruned() {
        let subject = Subject("O")
        let survivors = (0..<10).map { Watcher("S\($0)") }
        for survivor in survivors { subject.addObserver(survivor) }
        for round in 0..<5_000 { subject.addObserver(Watcher("D\(round)")) }
        #expect(subject.observerCount == 10)
        #expect(names(subject.observers) == survivors.map(\.name))
        #expect(GraphNode.consistencyViolations(among: [subject.graphNode]).isEmpty)
    }

    @Test("A broadcast body may drop the last reference to a later observer")
    func observerDiesDuringBroadcast() {
        let deinits = Counters()
        let subject = Subject("O")
        var doomed: Watcher? = Watcher("Doomed", deinits: deinits)
        let first = Watcher("First")
        subject.addObserver(first)
        subject.addObserver(doomed!)
        var called: [String] = []
        let delivered = subject.broadcast(as: Watcher.self) { watcher in
            called.append(watcher.name)
            if watcher === first { doomed = nil }
        }
        #expect(called == ["First"] && delivered == 1)
        #expect(deinits["Doomed"] == 1)
        #expect(subject.observerCount == 1)
    }
}

/// An observable whose callback for a join runs `onJoin` once.
private final class JoinHook: GraphObservable, @unchecked Sendable {
    let graphNode = GraphNode()
    let log: EventLog
    var onJoin: (() -> Void)?

    init(log: EventLog) { self.log = log }

    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        log.append("O.observer(\(subscribed ? "joined" : "left"))")
        guard subscribed, let hook = onJoin else { return }
        onJoin = nil
        hook()
    }
}

/// A tracking observer that unsubscribes itself from its observable in its deinit (as code
/// written for the RVSGeneralObserver kit often does).
private final class SelfRemovingTracker: GraphTrackingObserver, @unchecked Sendable {
    let graphNode = GraphNode()
    let observable: JoinHook
    let log: EventLog

    init(_ observable: JoinHook, log: EventLog) {
        self.observable = observable
        self.log = log
    }

    func didUnsubscribe(from observable: any GraphObservable) { log.append("T.didUnsubscribe") }

    deinit { log.append("removeObserver(self) -> \(observable.removeObserver(self) != nil)") }
}
