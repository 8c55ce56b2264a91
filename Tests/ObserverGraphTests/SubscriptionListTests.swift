import ObserverGraph
import Testing

/// A tracking observer's list keeps its one subscription in its node and moves to a registry
/// at the second: these tests walk that list across the move, back down to one entry and empty,
/// and through deallocations on either side, and compare it with a model after every step.
@Suite("Core: a tracking observer's subscriptions, from one to many and back")
struct SubscriptionListTests {
    /// What every query says about `tracker` against `expected` (its subscriptions, in order),
    /// among `subjects`; empty when all agree.
    static func disagreements(_ tracker: Tracker, _ expected: [Subject], among subjects: [Subject])
        -> [String]
    {
        var problems: [String] = []
        let listed = names(tracker.subscriptions)
        let wanted = expected.map(\.name)
        if listed != wanted { problems.append("\(tracker.name) lists \(listed), expected \(wanted)") }
        if tracker.subscriptionCount != expected.count {
            problems.append("\(tracker.name) counts \(tracker.subscriptionCount), expected \(expected.count)")
        }
        for subject in subjects {
            let member = expected.contains { $0 === subject }
            if tracker.isSubscribed(to: subject) != member || subject.hasObserver(tracker) != member {
                problems.append("\(tracker.name) in \(subject.name): expected \(member)")
            }
        }
        let violations = GraphNode.consistencyViolations(among: nodes(subjects + [tracker]))
        if !violations.isEmpty { problems.append("violations: \(violations)") }
        // An entry left behind by a deallocated tracker or subject (a teardown that missed a
        // lone subscription) shows only here: the queries above skip dead entries.
        let dangling = GraphSnapshot(observables: subjects, trackingObservers: [tracker]).danglingEntries
        if !dangling.isEmpty { problems.append("\(dangling.count) dangling entries") }
        return problems
    }

    @Test("One subscription, a second, back to one and to none: order, queries and audit agree")
    func oneToManyAndBack() {
        let (a, b, c) = (Subject("A"), Subject("B"), Subject("C"))
        let all = [a, b, c]
        let tracker = Tracker("T")
        #expect(Self.disagreements(tracker, [], among: all) == [])
        #expect(a.addObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [a], among: all) == [])
        // A duplicate is refused while the list holds its one entry, and after the move.
        #expect(a.addObserver(tracker) == nil)
        #expect(b.addObserver(tracker) != nil)
        #expect(a.addObserver(tracker) == nil)
        #expect(Self.disagreements(tracker, [a, b], among: all) == [])
        #expect(a.removeObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [b], among: all) == [])
        #expect(c.addObserver(tracker) != nil)
        #expect(a.addObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [b, c, a], among: all) == [])
        #expect(names(tracker.unsubscribeFromAll()) == ["B", "C", "A"])
        #expect(Self.disagreements(tracker, [], among: all) == [])
        #expect(c.addObserver(tracker) != nil)
        #expect(b.addObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [c, b], among: all) == [])
        #expect(c.removeObserver(tracker) != nil)
        #expect(b.removeObserver(tracker) != nil)
        #expect(b.removeObserver(tracker) == nil)
        #expect(Self.disagreements(tracker, [], among: all) == [])
    }

    @Test("A lone subscription goes with either side: the observable's deinit, the tracker's deinit")
    func loneSubscriptionTornDown() {
        let deinits = Counters()
        let keep = Subject("Keep")
        let tracker = Tracker("T", deinits: deinits)
        do {
            let gone = Subject("Gone", deinits: deinits)
            #expect(gone.addObserver(tracker) != nil)
            #expect(Self.disagreements(tracker, [gone], among: [gone, keep]) == [])
        }
        #expect(deinits["Gone"] == 1)
        #expect(Self.disagreements(tracker, [], among: [keep]) == [])
        // The emptied list takes a lone subscription again.
        #expect(keep.addObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [keep], among: [keep]) == [])
        weak var weakTracker: Tracker?
        do {
            let second = Tracker("T2", deinits: deinits)
            weakTracker = second
            #expect(keep.addObserver(second) != nil)
            #expect(names(keep.observers) == ["T", "T2"])
        }
        #expect(weakTracker == nil)
        #expect(deinits["T2"] == 1)
        #expect(names(keep.observers) == ["T"])
        #expect(GraphNode.consistencyViolations(among: [keep.graphNode, tracker.graphNode]) == [])
        #expect(GraphSnapshot(observables: [keep]).danglingEntries.isEmpty)
    }

    @Test("A lone subscription removed, then another: the tracker lists only the new one")
    func loneSubscriptionReplaced() {
        let (a, b) = (Subject("A"), Subject("B"))
        let tracker = Tracker("T")
        #expect(a.addObserver(tracker) != nil)
        #expect(a.removeObserver(tracker) != nil)
        #expect(a.removeObserver(tracker) == nil)
        #expect(Self.disagreements(tracker, [], among: [a, b]) == [])
        #expect(b.addObserver(tracker) != nil)
        #expect(Self.disagreements(tracker, [b], among: [a, b]) == [])
        #expect(tracker.unsubscribe(from: b))
        #expect(Self.disagreements(tracker, [], among: [a, b]) == [])
    }

    @Test(
        "Random subscribes, unsubscribes and deallocations keep every list equal to a model",
        arguments: [7, 8, 9] as [UInt64])
    func randomHistories(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var subjects = (0..<5).map { Subject("S\($0)") }
        var trackers = (0..<4).map { Tracker("T\($0)") }
        // The model: each tracker's subscriptions, in order, by subject name.
        var model: [[String]] = Array(repeating: [], count: trackers.count)
        var serial = 0
        /// Every tracker's queries against the model. Called between steps, once a step's
        /// locals (which may hold a replaced subject or tracker) are gone.
        func check(_ step: Int) {
            for (index, tracker) in trackers.enumerated() {
                let expected = model[index].compactMap { name in subjects.first { $0.name == name } }
                #expect(expected.count == model[index].count, "step \(step): a subject of the model is gone")
                #expect(Self.disagreements(tracker, expected, among: subjects) == [], "step \(step)")
            }
        }
        for step in 0..<1_000 {
            if step % 5 == 0 { check(step) }
            let t = Int.random(in: 0..<trackers.count, using: &random)
            let s = Int.random(in: 0..<subjects.count, using: &random)
            let tracker = trackers[t]
            let subject = subjects[s]
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<9:
                let added = subject.addObserver(tracker) != nil
                #expect(added == !model[t].contains(subject.name), "step \(step): subscribe")
                if added { model[t].append(subject.name) }
            case 9..<17:
                let removed = subject.removeObserver(tracker) != nil
                #expect(removed == model[t].contains(subject.name), "step \(step): unsubscribe")
                model[t].removeAll { $0 == subject.name }
            case 17:
                #expect(names(tracker.unsubscribeFromAll()) == model[t], "step \(step): unsubscribe from all")
                model[t] = []
            case 18:
                // The subject goes (with this step's locals): every list drops it.
                serial += 1
                let name = subject.name
                subjects[s] = Subject("S\(subjects.count + serial)")
                for index in model.indices { model[index].removeAll { $0 == name } }
            default:
                serial += 1
                trackers[t] = Tracker("T\(trackers.count + serial)")
                model[t] = []
            }
        }
        check(1_000)
    }
}
