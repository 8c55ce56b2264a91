import DailyQueue
import Foundation
import ObserverGraph
import Testing

/// Records what a manager reports.
final class EventRecorder: GraphObserver, QueueManagerObserver {
    var events: [String] = []
    var onEvent: ((QueueEvent) -> Void)?
    func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        events.append(event.description)
        onEvent?(event)
    }
}

/// Applies every changeset the queue delivers to a mirror of item ids; reports mismatches.
final class QueueMirror: Sendable {
    private let state = GraphLock<(ids: [ItemID], changesets: [ArrayChangeset], problems: [String])>(
        ([], [], []))
    @Sendable func apply(_ change: ArrayChange<QueueItem>) {
        state.withLock { state in
            let ids = change.array.map(\.id)
            do {
                let rebuilt = try change.changeset.apply(to: state.ids, newElements: ids)
                if rebuilt != ids { state.problems.append("\(change.changeset): \(rebuilt) ≠ \(ids)") }
            } catch {
                state.problems.append("\(error)")
            }
            state.ids = ids
            state.changesets.append(change.changeset)
        }
    }
    var ids: [ItemID] { state.withLock { $0.ids } }
    var changesets: [ArrayChangeset] { state.withLock { $0.changesets } }
    var problems: [String] { state.withLock { $0.problems } }
}

func titles(_ manager: QueueManager) -> [String] { manager.queue.array.map(\.title) }
func positions(_ manager: QueueManager) -> [Int?] { manager.queue.array.map(\.queuePosition) }

@Suite("DailyQueue: the queue manager")
struct QueueManagerTests {
    let store = InMemoryQueueStore()
    let recorder = EventRecorder()

    func makeManager(day: Weekday = .tuesday, rule: QueueRule = .doneToday) throws -> QueueManager {
        let manager = try QueueManager(store: store, rule: rule, startDay: day)
        manager.addObserver(recorder)
        return manager
    }

    @Test("Adding an item queues it at the next position, saves it and subscribes the manager")
    func addQueuesAndSubscribes() throws {
        let manager = try makeManager()
        let laundry = try manager.add(title: "Laundry")
        let dishes = try manager.add(title: "Dishes")
        #expect(titles(manager) == ["Laundry", "Dishes"])
        #expect(positions(manager) == [1, 2])
        #expect(manager.isSubscribed(to: laundry) && manager.isSubscribed(to: dishes))
        #expect(manager.subscriptions.count == 2)
        #expect(store.saveCount == 2)
        #expect(try store.load()?.items.map(\.title) == ["Laundry", "Dishes"])
        #expect(
            recorder.events == ["added #1 \"Laundry\" at position 1", "added #2 \"Dishes\" at position 2"])
        #expect(throws: QueueError.emptyTitle) { try manager.add(title: "  ") }
    }

    @Test("done true → false: the item leaves the queue, the subscription is gone, the item stays stored")
    func doneFalseRemoves() throws {
        let manager = try makeManager()
        let mirror = QueueMirror()
        let token = manager.queue.observeValuesNonisolated(mirror.apply)
        try manager.add(title: "Dishes")
        let laundry = try manager.add(title: "Laundry")
        try manager.add(title: "Groceries")
        laundry.done.value = false  // set on the item itself: the manager hears it through the graph
        #expect(titles(manager) == ["Dishes", "Groceries"])
        #expect(positions(manager) == [1, 2])
        #expect(laundry.queuePosition == nil)
        #expect(!manager.isSubscribed(to: laundry))
        #expect(!laundry.hasObserver(manager))
        #expect(manager.item(laundry.id) === laundry)
        #expect(try store.load()?.items.first { $0.id == laundry.id }?.queuePosition == nil)
        #expect(recorder.events.last == "removed #2 \"Laundry\" from position 2 (done became false)")
        #expect(mirror.changesets.last == ArrayChangeset(deletes: [1]))
        #expect(mirror.problems.isEmpty && mirror.ids == manager.queue.array.map(\.id))
        withExtendedLifetime(token) {}
    }

    @Test("The day-of-week case: a day other than the current day removes the item")
    func otherDayRemoves() throws {
        let manager = try makeManager(day: .tuesday)
        let item = try manager.add(title: "Gym")
        try manager.setDay(item.id, .wednesday)
        #expect(manager.queue.array.isEmpty)
        #expect(!manager.isSubscribed(to: item))
        #expect(recorder.events.last == "removed #1 \"Gym\" from position 1 (day became Wednesday)")
    }

    @Test("An item that qualifies again re-enters at the end, subscribed again")
    func reentersAtTheEnd() throws {
        let manager = try makeManager()
        let a = try manager.add(title: "A")
        try manager.add(title: "B")
        try manager.setDone(a.id, false)
        try manager.setDone(a.id, true)
        #expect(titles(manager) == ["B", "A"])
        #expect(positions(manager) == [1, 2])
        #expect(manager.isSubscribed(to: a))
        #expect(
            recorder.events.suffix(2) == [
                "removed #1 \"A\" from position 1 (done became false)",
                "queued #1 \"A\" at position 2 (done became true)",
            ])
    }

    @Test("Adding an item that does not qualify stores it without queueing it")
    func addNotQualifying() throws {
        let manager = try makeManager(day: .tuesday)
        let later = try manager.add(title: "Later", day: .friday)
        let undone = try manager.add(title: "Undone", done: false)
        #expect(manager.queue.array.isEmpty)
        #expect(manager.items.count == 2)
        #expect(!manager.isSubscribed(to: later) && !manager.isSubscribed(to: undone))
        #expect(
            recorder.events == [
                "stored #1 \"Later\" (not queued: due Friday, today is Tuesday)",
                "stored #2 \"Undone\" (not queued: not done)",
            ])
    }

    @Test("Deleting compacts the positions of the rest; deleting an unknown id is refused")
    func deleteCompacts() throws {
        let manager = try makeManager()
        let mirror = QueueMirror()
        let token = manager.queue.observeValuesNonisolated(mirror.apply)
        let items = try (1...4).map { try manager.add(title: "T\($0)") }
        try manager.delete(items[1].id)
        #expect(titles(manager) == ["T1", "T3", "T4"])
        #expect(positions(manager) == [1, 2, 3])
        #expect(manager.item(items[1].id) == nil)
        #expect(!manager.isSubscribed(to: items[1]))
        #expect(try store.load()?.items.map(\.title) == ["T1", "T3", "T4"])
        #expect(throws: QueueError.unknownItem(ItemID(99))) { try manager.delete(ItemID(99)) }
        #expect(mirror.changesets.last == ArrayChangeset(deletes: [1]))
        withExtendedLifetime(token) {}
    }

    @Test("Reordering is a move in the changeset; positions are updated and saved")
    func reorder() throws {
        let manager = try makeManager()
        let mirror = QueueMirror()
        let token = manager.queue.observeValuesNonisolated(mirror.apply)
        let items = try (1...4).map { try manager.add(title: "T\($0)") }
        try manager.move(items[3].id, to: 1)
        #expect(titles(manager) == ["T4", "T1", "T2", "T3"])
        #expect(positions(manager) == [1, 2, 3, 4])
        #expect(mirror.changesets.last == ArrayChangeset(moves: [.init(from: 3, to: 0)]))
        #expect(try store.load()?.items.map(\.queuePosition) == [2, 3, 4, 1])
        #expect(recorder.events.last == "moved #4 \"T4\" from position 4 to 1")
        #expect(throws: QueueError.badPosition(9, count: 4)) { try manager.move(items[0].id, to: 9) }
        try manager.setDone(items[0].id, false)
        #expect(throws: QueueError.notQueued(items[0].id)) { try manager.move(items[0].id, to: 1) }
        withExtendedLifetime(token) {}
    }

    @Test("A day rollover re-checks every item in ONE queue change")
    func dayRollover() throws {
        let manager = try makeManager(day: .tuesday)
        let mirror = QueueMirror()
        let token = manager.queue.observeValuesNonisolated(mirror.apply)
        let tue1 = try manager.add(title: "Tue 1")
        let wed = try manager.add(title: "Wed", day: .wednesday)
        try manager.add(title: "Tue 2")
        let before = mirror.changesets.count
        try manager.setCurrentDay(.wednesday)
        #expect(mirror.changesets.count == before + 1)
        #expect(mirror.changesets.last == ArrayChangeset(deletes: [0, 1], inserts: [0]))
        #expect(titles(manager) == ["Wed"])
        #expect(manager.isSubscribed(to: wed) && !manager.isSubscribed(to: tue1))
        #expect(manager.currentDay == .wednesday)
        #expect(try store.load()?.currentDay == .wednesday)
        #expect(
            recorder.events.suffix(4) == [
                "today is Wednesday (was Tuesday)",
                "removed #1 \"Tue 1\" from position 1 (not due Wednesday)",
                "removed #3 \"Tue 2\" from position 2 (not due Wednesday)",
                "queued #2 \"Wed\" at position 1 (due Wednesday)",
            ])
        #expect(mirror.problems.isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test("The qualifying rule is a replaceable value")
    func customRule() throws {
        let anyDay = QueueRule(name: "everything not done") { item, _ in !item.done }
        let manager = try makeManager(rule: anyDay)
        let item = try manager.add(title: "Todo", day: .sunday, done: false)
        #expect(titles(manager) == ["Todo"])
        try manager.setDone(item.id, true)
        #expect(manager.queue.array.isEmpty)
        #expect(!manager.isSubscribed(to: item))
    }

    @Test("Removals triggered from inside item callbacks never corrupt iteration or indices")
    func cascadingRemovals() throws {
        let manager = try makeManager()
        let mirror = QueueMirror()
        let token = manager.queue.observeValuesNonisolated(mirror.apply)
        let items = try (1...6).map { try manager.add(title: "T\($0)") }
        // When one item leaves, the next one is marked not done from inside that callback.
        recorder.onEvent = { event in
            guard case .left(let item, _, _) = event,
                let index = items.firstIndex(where: { $0.id == item.id }),
                index + 1 < items.count
            else { return }
            items[index + 1].done.value = false
        }
        items[1].done.value = false
        #expect(titles(manager) == ["T1"])
        #expect(positions(manager) == [1])
        #expect(mirror.problems.isEmpty && mirror.ids == [items[0].id])
        #expect(manager.subscriptions.count == 1)
        #expect(GraphNode.consistencyViolations(among: [manager.graphNode] + items.map(\.graphNode)).isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test("Loading restores items, positions and the manager's subscriptions")
    func loadRestores() throws {
        do {
            let manager = try makeManager()
            let items = try (1...3).map { try manager.add(title: "T\($0)") }
            try manager.add(title: "Friday", day: .friday)
            try manager.move(items[2].id, to: 1)
        }
        let reloaded = try QueueManager(store: store, startDay: .monday)
        #expect(reloaded.currentDay == .tuesday)
        #expect(titles(reloaded) == ["T3", "T1", "T2"])
        #expect(positions(reloaded) == [1, 2, 3])
        #expect(reloaded.items.count == 4)
        #expect(reloaded.queue.array.allSatisfy { reloaded.isSubscribed(to: $0) })
        #expect(reloaded.subscriptions.count == 3)
        // Still observing: a restored item that stops qualifying leaves.
        reloaded.queue.array[0].done.value = false
        #expect(titles(reloaded) == ["T1", "T2"])
        #expect(try reloaded.add(title: "T5").id == ItemID(5))
    }

    @Test("Loading a store that disagrees with the rule brings the queue in line, in memory only")
    func loadReconcilesWithTheRule() throws {
        func item(_ id: Int, _ title: String, done: Bool, _ day: Weekday, at position: Int?) -> StoredItem {
            StoredItem(id: ItemID(id), title: title, done: done, dayOfTheWeek: day, queuePosition: position)
        }
        let stored = StoredQueue(
            currentDay: .tuesday, nextID: 6,
            items: [
                item(1, "A", done: true, .tuesday, at: 2),
                item(2, "B", done: false, .tuesday, at: 1),  // queued, but not done: leaves
                item(3, "C", done: true, .tuesday, at: nil),  // qualifies, not queued: joins the end
                item(4, "D", done: true, .monday, at: 3),  // queued, but due Monday: leaves
                item(5, "E", done: true, .tuesday, at: 4),
            ])
        let store = InMemoryQueueStore(stored)
        let manager = try QueueManager(store: store, startDay: .friday)
        #expect(titles(manager) == ["A", "E", "C"])
        #expect(positions(manager) == [1, 2, 3])
        #expect(manager.items.map(\.queuePosition) == [1, nil, 3, nil, 2])
        #expect(manager.subscriptions.count == 3)
        #expect(manager.queue.array.allSatisfy { manager.isSubscribed(to: $0) })
        #expect(store.saveCount == 0)  // nothing is written by loading
        // The next save writes the queue as the manager holds it.
        try manager.add(title: "F")
        #expect(try store.load()?.items.map(\.queuePosition) == [1, nil, 3, nil, 2, 4])
        // Under another rule, the same file gives another queue.
        let everything = QueueRule(name: "everything", qualifies: { _, _ in true })
        let all = try QueueManager(store: InMemoryQueueStore(stored), rule: everything, startDay: .friday)
        #expect(titles(all) == ["B", "A", "D", "E", "C"])
        #expect(positions(all) == [1, 2, 3, 4, 5])
    }

    @Test("A change to an item that is not queued and still does not qualify is saved and reported")
    func changeOfAnItemLeftOutIsSaved() throws {
        let store = InMemoryQueueStore()
        let manager = try QueueManager(store: store, startDay: .tuesday)
        let recorder = EventRecorder()
        manager.addObserver(recorder)
        let item = try manager.add(title: "Later", day: .friday)  // due another day: not queued
        let before = recorder.events.count
        try manager.setDay(item.id, .saturday)
        #expect(try store.load()?.items.map(\.dayOfTheWeek) == [.saturday])
        #expect(recorder.events.count == before + 1)
    }

    @Test("A day change keeps an item that still qualifies once, where it was")
    func dayChangeKeepsAnItemThatStillQualifies() throws {
        let rule = QueueRule(name: "everything not done") { item, _ in !item.done }
        let manager = try QueueManager(store: InMemoryQueueStore(), rule: rule, startDay: .tuesday)
        try manager.add(title: "Todo", done: false)
        try manager.setCurrentDay(.wednesday)
        #expect(titles(manager) == ["Todo"])
        #expect(positions(manager) == [1])
    }
}

/// A store that can be told to fail, like a disk that fills up.
final class FlakyStore: QueueStore {
    private let inner = InMemoryQueueStore()
    private let failing = GraphLock(false)
    func fail(_ on: Bool) { failing.withLock { $0 = on } }
    func load() throws(StoreError) -> StoredQueue? { try inner.load() }
    func save(_ queue: StoredQueue) throws(StoreError) {
        if failing.withLock({ $0 }) { throw .unwritable(path: "flaky", reason: "disk full") }
        try inner.save(queue)
    }
    func loadWithRevision() throws(StoreError) -> (queue: StoredQueue?, revision: StoreRevision) {
        try inner.loadWithRevision()
    }
    func save(_ queue: StoredQueue, ifUnchangedSince revision: StoreRevision) throws(StoreError)
        -> StoreRevision
    {
        if failing.withLock({ $0 }) { throw .unwritable(path: "flaky", reason: "disk full") }
        return try inner.save(queue, ifUnchangedSince: revision)
    }
}

@Suite("DailyQueue: failing saves are reported, never swallowed")
struct FailingSaveTests {
    @Test("A queued item leaving because of setDone/setDay reports a failed save")
    func leavingReportsFailure() throws {
        let store = FlakyStore()
        let manager = try QueueManager(store: store, startDay: .tuesday)
        let a = try manager.add(title: "A")
        let b = try manager.add(title: "B")
        store.fail(true)
        #expect(throws: QueueError.store(.unwritable(path: "flaky", reason: "disk full"))) {
            try manager.setDone(a.id, false)
        }
        #expect(throws: QueueError.store(.unwritable(path: "flaky", reason: "disk full"))) {
            try manager.setDay(b.id, .friday)
        }
        // Stored data is unchanged: both items are still queued in the store.
        #expect(try store.load()?.items.map(\.queuePosition) == [1, 2])
        // A change made directly on an item cannot throw: it is kept for the app to read.
        store.fail(false)
        let c = try manager.add(title: "C")
        store.fail(true)
        c.done.value = false
        #expect(manager.lastSaveFailure == .store(.unwritable(path: "flaky", reason: "disk full")))
        store.fail(false)
        try manager.add(title: "D")
        #expect(manager.lastSaveFailure == nil)
    }

    @Test("Setting a value to what it already is saves and reports nothing")
    func unchangedValue() throws {
        let store = InMemoryQueueStore()
        let manager = try QueueManager(store: store, startDay: .tuesday)
        let recorder = EventRecorder()
        manager.addObserver(recorder)
        let a = try manager.add(title: "A")
        let saves = store.saveCount
        try manager.setDone(a.id, true)
        try manager.setDay(a.id, .tuesday)
        #expect(store.saveCount == saves)
        #expect(recorder.events == ["added #1 \"A\" at position 1"])
    }
}
