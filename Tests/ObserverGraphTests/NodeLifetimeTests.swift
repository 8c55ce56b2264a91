import ObserverGraph
import Testing

/// An observable and tracking observer whose node the test may hold too, so that the node
/// outlives it (each test uses it in one of the two roles).
private final class ExternalNodeHub: GraphObservable, GraphTrackingObserver, Named, @unchecked Sendable {
    let graphNode: GraphNode
    let name: String
    init(_ name: String, node: GraphNode) {
        self.name = name
        graphNode = node
    }
}

/// Objects handed from one thread to another, for the tests that deallocate them elsewhere.
private final class Handoff<Object>: @unchecked Sendable {
    private let lock = GraphLock(())
    private var objects: [Object]
    init(_ objects: [Object]) { self.objects = objects }
    /// Takes every object out; they are released where the caller drops the result.
    func takeAll() -> [Object] {
        lock.withLock { _ in
            defer { objects = [] }
            return objects
        }
    }
}

/// A tracking observer that leaves its observable in its own deinit (the pattern of observer
/// kits that need it), and records what the graph looks like right then.
private final class LeavingTracker: GraphTrackingObserver, @unchecked Sendable {
    /// Declared before `graphNode`: when this is the only reference, the observable (and its
    /// node) goes before this tracker's node.
    let subject: Subject
    let graphNode = GraphNode()
    let seen: GraphLock<[String]>
    init(_ subject: Subject, seen: GraphLock<[String]>) {
        self.subject = subject
        self.seen = seen
    }
    deinit {
        let removed = subject.removeObserver(self) != nil
        let violations = GraphNode.consistencyViolations(among: [subject.graphNode, graphNode])
        seen.withLock { $0.append("removed \(removed), violations \(violations)") }
    }
}

@Suite("Core: nodes that outlive their objects, and edges torn down on several threads at once")
struct NodeLifetimeTests {
    @Test("A node kept after its observable: its trackers skip it, and drop it when the node goes")
    func observableNodeOutlivesObservable() {
        let tracker = Tracker("T")
        let keep = Subject("Keep")
        keep.addObserver(tracker)
        var node: GraphNode? = GraphNode()
        weak var weakGone: ExternalNodeHub?
        do {
            guard let node else { return }
            let gone = ExternalNodeHub("Gone", node: node)
            weakGone = gone
            gone.addObserver(tracker)
            #expect(names(tracker.subscriptions) == ["Keep", "Gone"])
        }
        #expect(weakGone == nil)
        // The edge stays on both sides while the node lives; the observable is not listed.
        #expect(names(tracker.subscriptions) == ["Keep"])
        #expect(tracker.subscriptionCount == 1)
        #expect(GraphSnapshot(trackingObservers: [tracker]).danglingEntries.count == 1)
        if let node {
            #expect(
                GraphNode.consistencyViolations(among: [node, tracker.graphNode, keep.graphNode]).isEmpty)
        }
        node = nil
        #expect(GraphSnapshot(trackingObservers: [tracker]).danglingEntries.isEmpty)
        #expect(names(tracker.subscriptions) == ["Keep"])
        // The tracker goes on as before.
        let next = Subject("Next")
        next.addObserver(tracker)
        #expect(names(tracker.unsubscribeFromAll()) == ["Keep", "Next"])
        #expect(tracker.subscriptionCount == 0)
        #expect(
            GraphNode.consistencyViolations(among: [tracker.graphNode, keep.graphNode, next.graphNode])
                .isEmpty)
    }

    @Test("A node kept after its tracking observer: observables skip it, and drop it when the node goes")
    func trackerNodeOutlivesTracker() {
        let subject = Subject("S")
        let other = Subject("O")
        let watcher = Watcher("W")
        subject.addObserver(watcher)
        var node: GraphNode? = GraphNode()
        weak var weakTracker: ExternalNodeHub?
        do {
            guard let node else { return }
            let tracker = ExternalNodeHub("T", node: node)
            weakTracker = tracker
            subject.addObserver(tracker)
            other.addObserver(tracker)
            #expect(subject.observerCount == 2 && other.observerCount == 1)
        }
        #expect(weakTracker == nil)
        #expect(names(subject.observers) == ["W"])
        #expect(subject.observerCount == 1 && other.observerCount == 0)
        #expect(subject.broadcast(as: (any Named).self) { _ in } == 1)
        #expect(other.removeAllObservers().isEmpty)
        if let node {
            #expect(
                GraphNode.consistencyViolations(among: [node, subject.graphNode, other.graphNode]).isEmpty)
        }
        #expect(GraphSnapshot(observables: [subject]).danglingEntries.count == 1)
        node = nil
        #expect(names(subject.observers) == ["W"])
        #expect(GraphSnapshot(observables: [subject]).danglingEntries.isEmpty)
        #expect(GraphSnapshot(observables: [other]).danglingEntries.isEmpty)
        #expect(GraphNode.consistencyViolations(among: [subject.graphNode, other.graphNode]).isEmpty)
        withExtendedLifetime(watcher) {}
    }

    /// Stress, meant for the sanitizers too: every observable and tracking observer of a dense
    /// graph is deallocated at once: the observables, the trackers and the hubs (both) each on a thread of their own,
    /// so that both ends of many edges tear them down together.
    @Test("Observables, hubs and trackers deallocated on three threads at once leave no edge behind")
    func teardownOnThreeThreads() {
        let deinits = Counters()
        let survivor = Tracker("survivor")
        let anchor = Subject("anchor")
        anchor.addObserver(survivor)
        let watcher = Watcher("W")
        for round in 0..<150 {
            var subjects = (0..<6).map { Subject("S\(round).\($0)", deinits: deinits) }
            var trackers = (0..<6).map { Tracker("T\(round).\($0)", deinits: deinits) }
            var hubs = (0..<2).map { Hub("H\(round).\($0)", deinits: deinits) }
            for subject in subjects {
                for tracker in trackers { subject.addObserver(tracker) }
                for hub in hubs { subject.addObserver(hub) }
                subject.addObserver(survivor)
                subject.addObserver(watcher)
            }
            for hub in hubs {
                anchor.addObserver(hub)
                for tracker in trackers { hub.addObserver(tracker) }
            }
            let goneSubjects = Handoff(subjects)
            let goneTrackers = Handoff(trackers)
            let goneHubs = Handoff(hubs)
            subjects = []
            trackers = []
            hubs = []
            race(threads: 3) { thread in
                switch thread {
                case 0: _ = goneSubjects.takeAll()
                case 1: _ = goneTrackers.takeAll()
                default: _ = goneHubs.takeAll()
                }
            }
        }
        #expect(
            (0..<150).allSatisfy { round in
                (0..<6).allSatisfy { deinits["S\(round).\($0)"] == 1 && deinits["T\(round).\($0)"] == 1 }
                    && (0..<2).allSatisfy { deinits["H\(round).\($0)"] == 1 }
            })
        #expect(names(survivor.subscriptions) == ["anchor"])
        #expect(survivor.subscriptionCount == 1)
        #expect(names(anchor.observers) == ["survivor"])
        #expect(GraphSnapshot(trackingObservers: [survivor]).danglingEntries.isEmpty)
        #expect(GraphSnapshot(observables: [anchor]).danglingEntries.isEmpty)
        #expect(GraphNode.consistencyViolations(among: [survivor.graphNode, anchor.graphNode]).isEmpty)
        withExtendedLifetime(watcher) {}
    }

    /// Stress, meant for the sanitizers too: while observables and trackers are deallocated on
    /// two threads, a third drops extra references to their nodes (so that the last reference
    /// to a node may go in the middle of another node's teardown) and a fourth reads the lists
    /// that name nodes by address (`subscriptions`, `subscriptionCount`, snapshots).
    @Test("Teardowns, readers and extra node references racing leave the survivors exact")
    func teardownWithReadersAndNodeHolders() {
        let survivor = Tracker("survivor")
        let anchor = Subject("anchor")
        anchor.addObserver(survivor)
        for round in 0..<120 {
            var subjects = (0..<4).map { Subject("S\(round).\($0)") }
            var trackers = (0..<4).map { Tracker("T\(round).\($0)") }
            for subject in subjects {
                for tracker in trackers { subject.addObserver(tracker) }
                subject.addObserver(survivor)
            }
            let goneSubjects = Handoff(subjects)
            let goneTrackers = Handoff(trackers)
            let goneNodes = Handoff(subjects.map(\.graphNode) + trackers.map(\.graphNode))
            subjects = []
            trackers = []
            let reads = GraphLock(0)
            race(threads: 4) { thread in
                switch thread {
                case 0: _ = goneSubjects.takeAll()
                case 1: _ = goneTrackers.takeAll()
                case 2: _ = goneNodes.takeAll()
                default:
                    for _ in 0..<3 {
                        let listed = survivor.subscriptions.count
                        let counted = survivor.subscriptionCount
                        let snapshot = GraphSnapshot(trackingObservers: [survivor])
                        if listed >= 1, counted >= 1, snapshot.isConsistent { reads.withLock { $0 += 1 } }
                    }
                }
            }
            #expect(reads.withLock { $0 } == 3)
        }
        #expect(names(survivor.subscriptions) == ["anchor"])
        #expect(survivor.subscriptionCount == 1)
        #expect(GraphSnapshot(trackingObservers: [survivor]).danglingEntries.isEmpty)
        #expect(GraphSnapshot(observables: [anchor]).danglingEntries.isEmpty)
        #expect(GraphNode.consistencyViolations(among: [survivor.graphNode, anchor.graphNode]).isEmpty)
    }

    /// A deinit that removes its own tracker finds its entry dead: the removal reports nothing
    /// (no callback can be given a dying observer), and the edge goes on both sides at once,
    /// so no list names a node that may go first (the observable here, whose only reference the
    /// tracker holds).
    @Test("A tracking observer removing itself in its deinit takes its edge off both sides")
    func trackerRemovingItselfInDeinit() {
        let seen = GraphLock<[String]>([])
        let kept = Subject("kept")
        do {
            let tracker = LeavingTracker(kept, seen: seen)
            kept.addObserver(tracker)
        }
        #expect(seen.withLock { $0 } == ["removed false, violations []"])
        #expect(kept.observerCount == 0)
        #expect(GraphSnapshot(observables: [kept]).danglingEntries.isEmpty)
        for _ in 0..<200 {
            let tracker = LeavingTracker(Subject("only"), seen: seen)
            tracker.subject.addObserver(tracker)
        }
        #expect(seen.withLock { $0.count } == 201)
        #expect(seen.withLock { $0 }.allSatisfy { $0 == "removed false, violations []" })
    }
}
