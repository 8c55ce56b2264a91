import DailyQueue
import ObserverGraph
import ObserverGraphTesting
import Testing

/// The queue manager of source document 000 with its item subscriptions written as operators,
/// as the document writes them (`map` on `item.done` and `item.dayOfTheWeek`): each queued item
/// gets one derived stream of reasons to leave (`done` became false, or the day is no longer
/// the current day), merged, and one token; the first reason removes the item from the queue
/// and cancels the token.
///
/// `@unchecked Sendable`: only the test's thread touches it (the clock runs each step on it, and
/// nonisolated observers run before a set returns).
final class OperatorQueue: @unchecked Sendable {
    let currentDay: Weekday
    let queue = ObservableArray<QueueItem>()
    let removals: RecordingObserver<String>
    private(set) var subscriptions: [ItemID: SubscriptionToken] = [:]

    init(currentDay: Weekday, removals: RecordingObserver<String>) {
        self.currentDay = currentDay
        self.removals = removals
    }

    func add(_ item: QueueItem) {
        _ = queue.append(item)
        let day = currentDay
        let notDone = item.done.filter { !$0 }.map { _ in "done" }
        let otherDay = item.dayOfTheWeek.filter { $0 != day }.map { _ in "day" }
        subscriptions[item.id] = notDone.merge(otherDay).observeValuesNonisolated { [unowned self] reason in
            self.remove(item, because: reason)
        }
    }

    private func remove(_ item: QueueItem, because reason: String) {
        if let index = queue.array.firstIndex(where: { $0 === item }) { _ = try? queue.remove(at: index) }
        subscriptions.removeValue(forKey: item.id)?.cancel()
        removals.record(.value(reason))
    }
}

@Suite("DailyQueue: the item-flag subscriptions rebuilt with operators, as marble diagrams")
struct ItemFlagOperatorFlowTests {
    /// Adds itemA (Tuesday, done) at step 2, runs `steps` on the item, and returns the diagram
    /// of the queue, the item's `property` and the removals, with the queue.
    func play<Value: Sendable>(
        _ property: @escaping (QueueItem) -> ObservableValue<Value>, label: String,
        symbol: @escaping (Value) -> String, steps: [(Int, (QueueItem) -> Void)]
    ) throws -> (MarbleDiagram, OperatorQueue) {
        let clock = VirtualClock()
        let removals = RecordingObserver<String>(clock: clock, name: "remove(itemA)")
        let manager = OperatorQueue(currentDay: .tuesday, removals: removals)
        let item = QueueItem(id: ItemID(1), title: "itemA", done: true, dayOfTheWeek: .tuesday)
        let queue = RecordingObserver<ArrayChange<QueueItem>>(clock: clock, name: "queue")
        let values = RecordingObserver<Value>(clock: clock, name: label)
        queue.record(manager.queue)
        clock.schedule(at: 2) {
            manager.add(item)
            values.record(property(item))
        }
        for (step, action) in steps { clock.schedule(at: step) { action(item) } }
        clock.run()
        clock.advance(by: 2)
        let diagram = MarbleDiagram(
            queue.marbleRow(label: "queue") { $0.array.map(\.title).joined(separator: ",") },
            values.marbleRow(label: label, symbol: symbol),
            removals.marbleRow(label: "remove(itemA)") { _ in "O" })
        queue.cancel()
        values.cancel()
        return (diagram, manager)
    }

    @Test("done true → false removes itemA once and cancels its subscription; later flips do nothing")
    func doneFlow() throws {
        let (diagram, manager) = try play(
            \.done, label: "item.Done", symbol: { $0 ? "T" : "F" },
            steps: [
                (9, { $0.done.value = false }), (12, { $0.done.value = true }),
                (14, { $0.done.value = false }),
            ])
        try diagram.verify(
            matches: """
                queue        : []-[itemA]------[]-------->
                item.Done    : ---T------------F---T-F--->
                remove(itemA): ----------------O--------->
                """)
        #expect(manager.subscriptions.isEmpty)
        #expect(manager.queue.array.isEmpty)
    }

    @Test("currentDay = Tuesday: itemA's day 2 → 3 removes it once and cancels its subscription")
    func dayFlow() throws {
        let (diagram, manager) = try play(
            \.dayOfTheWeek, label: "item.DayOfTheWeek", symbol: { "\($0.rawValue)" },
            steps: [
                (9, { $0.dayOfTheWeek.value = .wednesday }), (12, { $0.dayOfTheWeek.value = .tuesday }),
                (14, { $0.dayOfTheWeek.value = .thursday }),
            ])
        try diagram.verify(
            matches: """
                queue            : []-[itemA]------[]-------->
                item.DayOfTheWeek: ---2------------3---2-4--->
                remove(itemA)    : ----------------O--------->
                """)
        #expect(manager.subscriptions.isEmpty)
    }

    @Test("A set that keeps itemA in the queue (done stays true, the same day) removes nothing")
    func staysQueued() throws {
        let (diagram, manager) = try play(
            \.done, label: "item.Done", symbol: { $0 ? "T" : "F" },
            steps: [(5, { $0.done.value = true }), (7, { $0.dayOfTheWeek.value = .tuesday })])
        try diagram.verify(
            matches: """
                queue        : []-[itemA]-------->
                item.Done    : ---T-------------->
                remove(itemA): ------------------>
                """)
        #expect(manager.subscriptions.count == 1)
    }
}
