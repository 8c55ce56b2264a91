import DailyQueue
import ObserverGraph
import ObserverGraphTesting
import Testing

/// The source document's flows, checked as marble diagrams recorded from real callbacks.
@Suite("DailyQueue: the source document's flows as marble diagrams")
struct MarbleFlowTests {
    /// Records the queue (as titles) and one item property while `steps` run on a clock.
    func record<Value: Sendable>(
        _ property: @escaping (QueueItem) -> ObservableValue<Value>, label: String,
        symbol: @escaping (Value) -> String, steps: [(Int, (QueueManager) throws -> Void)]
    ) throws -> (MarbleDiagram, QueueManager) {
        let clock = VirtualClock()
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .tuesday)
        let queue = RecordingObserver<ArrayChange<QueueItem>>(clock: clock, name: "queue")
        queue.record(manager.queue)
        let item = RecordingObserver<Value>(clock: clock, name: label)
        for (step, action) in steps {
            clock.schedule(at: step) {
                do { try action(manager) } catch { Issue.record("step \(step): \(error)") }
                if item.history.isEmpty, let first = manager.items.first { item.record(property(first)) }
            }
        }
        clock.run()
        let diagram = MarbleDiagram(
            queue.marbleRow(label: "queue") { $0.array.map(\.title).joined(separator: ",") },
            item.marbleRow(label: label, symbol: symbol))
        queue.cancel()
        item.cancel()
        return (diagram, manager)
    }

    @Test("Add itemA, then done true → false removes it and cancels the subscription")
    func doneFlow() throws {
        let (diagram, manager) = try record(
            \.done, label: "item.Done", symbol: { $0 ? "T" : "F" },
            steps: [(2, { _ = try $0.add(title: "itemA") }), (9, { try $0.setDone(ItemID(1), false) })])
        try diagram.verify(
            matches: """
                queue    : []-[itemA]------[]->
                item.Done: ---T------------F-->
                """)
        #expect(!manager.isSubscribed(to: manager.items[0]))
    }

    @Test("currentDay = 2: itemA's day 2 → 3 removes it and cancels the subscription")
    func dayFlow() throws {
        let (diagram, manager) = try record(
            \.dayOfTheWeek, label: "item.DayOfTheWeek", symbol: { "\($0.rawValue)" },
            steps: [(2, { _ = try $0.add(title: "itemA") }), (9, { try $0.setDay(ItemID(1), .wednesday) })])
        try diagram.verify(
            matches: """
                queue            : []-[itemA]------[]->
                item.DayOfTheWeek: ---2------------3-->
                """)
        #expect(!manager.isSubscribed(to: manager.items[0]))
        #expect(manager.items.count == 1)
    }

    @Test("The demo (`swift run daily-queue`) plays the flows and exits 0")
    func demo() throws {
        let result = try DailyQueueCommand.run([])
        #expect(result.status == 0 && result.err.isEmpty)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = try #require(lines.firstIndex(of: "1. itemA: done becomes false"))
        #expect(
            Array(lines[first + 1...first + 6]) == [
                "   add(itemA)   : --O-------------->",
                "   subscribe()  : --O--------!----->",
                "   queue        : [][itemA]--[]---->",
                "   item.Done    : --T--------F----->",
                "   remove(itemA): -----------O----->",
                "   changeset    : =-[+0]-----[-0]-->",
            ])
        #expect(lines.contains("   manager subscribed to itemA now: false; itemA still stored: yes"))
        #expect(lines.contains("Wednesday's queue (2 item(s)):"))
    }
}
