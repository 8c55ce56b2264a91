import DailyQueue
import Foundation
import ObserverGraph
import Testing

/// A fresh temporary folder per test.
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "daily-queue-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

struct SimulatedCrash: Error {}

@Suite("DailyQueue: the JSON file store")
struct JSONStoreTests {
    @Test("Saves and loads back exactly; a missing file is an empty store")
    func roundTrip() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let store = JSONFileQueueStore(url: url)
        #expect(try store.load() == nil)
        let queue = StoredQueue(
            currentDay: .friday, nextID: 3,
            items: [
                StoredItem(
                    id: ItemID(1), title: "Laundry", done: true, dayOfTheWeek: .friday, queuePosition: 1),
                StoredItem(
                    id: ItemID(2), title: "Taxes", done: false, dayOfTheWeek: .monday, queuePosition: nil),
            ])
        try store.save(queue)
        #expect(try store.load() == queue)
    }

    @Test("A write interrupted before the rename leaves the old file intact")
    func crashBeforeRename() throws {
        let folder = try temporaryFolder()
        let url = folder.appendingPathComponent("queue.json")
        let original = StoredQueue(
            currentDay: .monday, nextID: 2,
            items: [
                StoredItem(
                    id: ItemID(1), title: "Keep me", done: true, dayOfTheWeek: .monday, queuePosition: 1)
            ])
        try JSONFileQueueStore(url: url).save(original)
        let bytes = try Data(contentsOf: url)
        let crashing = JSONFileQueueStore(url: url, beforeRename: { throw SimulatedCrash() })
        #expect(throws: StoreError.self) { try crashing.save(StoredQueue(currentDay: .sunday)) }
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try JSONFileQueueStore(url: url).load() == original)
        // A temporary file that a real crash would leave behind is ignored.
        try Data("{ half a file".utf8).write(to: folder.appendingPathComponent(".queue.json.partial.tmp"))
        #expect(try JSONFileQueueStore(url: url).load() == original)
    }

    @Test("A corrupt file is a clear error, and is never overwritten")
    func corruptFile() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let garbage = Data("this is not json".utf8)
        try garbage.write(to: url)
        let store = JSONFileQueueStore(url: url)
        #expect(throws: StoreError.corrupt(path: url.path, reason: "not a daily-queue file")) {
            try store.load()
        }
        #expect(throws: StoreError.self) { try QueueManager(store: store, startDay: .monday) }
        #expect(try Data(contentsOf: url) == garbage)
        let wrongShape = Data(#"{"formatVersion": 1, "items": 3}"#.utf8)
        try wrongShape.write(to: url)
        #expect(throws: StoreError.self) { try store.load() }
        #expect(try Data(contentsOf: url) == wrongShape)
    }

    @Test("A file from a newer format version is refused with a clear message")
    func newerFormat() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        try Data(#"{"formatVersion": 7, "future": true}"#.utf8).write(to: url)
        let error = #expect(throws: StoreError.self) { try JSONFileQueueStore(url: url).load() }
        #expect(error == .newerFormat(path: url.path, found: 7, supported: 1))
        #expect(error?.description.contains("format version 7") == true)
    }

    @Test("An unwritable location is a typed error")
    func unwritable() throws {
        let folder = try temporaryFolder()
        let blocker = folder.appendingPathComponent("file")
        try Data().write(to: blocker)
        let store = JSONFileQueueStore(url: blocker.appendingPathComponent("queue.json"))
        #expect(throws: StoreError.self) { try store.save(StoredQueue(currentDay: .monday)) }
    }
}

@Suite("DailyQueue: the view model (on the main actor, as an app runs it)")
@MainActor
struct QueueViewModelTests {
    @Test("Loading, then result; empty when nothing qualifies; operations update the state")
    func states() throws {
        let store = InMemoryQueueStore()
        let model = QueueViewModel(store: store, startDay: .tuesday)
        var states: [String] = []
        // A plain main-actor closure: it appends to a local of this main-actor test.
        let token = model.state.observeValues { state in
            let text =
                switch state {
                case .loading: "loading"
                case .empty: "empty"
                case .result(let items): items.map(\.title).joined(separator: ",")
                case .error(let error): "error: \(error)"
                }
            states.append(text)
        }
        model.load()
        try model.add(title: "A")
        try model.add(title: "B")
        let b = model.manager!.queue.array[1].id
        try model.move(b, to: 1)
        try model.toggleDone(b)
        try model.setDay(model.manager!.queue.array[0].id, .friday)
        #expect(states == ["loading", "empty", "A", "A,B", "B,A", "A", "empty"])
        #expect(model.rows.array.isEmpty)
        #expect(throws: QueueError.unknownItem(ItemID(42))) { try model.toggleDone(ItemID(42)) }
        withExtendedLifetime(token) {}
    }

    @Test("A corrupt store is a recoverable error state, and a retry can succeed")
    func errorThenRetry() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        try Data("garbage".utf8).write(to: url)
        let model = QueueViewModel(store: JSONFileQueueStore(url: url), startDay: .monday)
        model.load()
        guard case .error(let error) = model.state.value else {
            Issue.record("expected an error state, got \(model.state.value)")
            return
        }
        #expect(error as? StoreError == .corrupt(path: url.path, reason: "not a daily-queue file"))
        #expect(throws: QueueError.store(.corrupt(path: url.path, reason: "not a daily-queue file"))) {
            try model.add(title: "X")
        }
        try FileManager.default.removeItem(at: url)
        model.load()
        #expect(model.state.value == .empty)
    }

    @Test("The rows deliver fine-grained changes for a table")
    func rows() throws {
        let model = QueueViewModel(store: InMemoryQueueStore(), startDay: .monday)
        model.load()
        var changes: [ArrayChangeset] = []
        let token = model.rows.observeValues { change in changes.append(change.changeset) }
        try model.add(title: "A")
        try model.add(title: "B")
        try model.move(ItemID(2), to: 1)
        try model.delete(ItemID(1))
        #expect(
            changes == [
                ArrayChangeset(), ArrayChangeset(inserts: [0]), ArrayChangeset(inserts: [1]),
                ArrayChangeset(moves: [.init(from: 1, to: 0)]), ArrayChangeset(deletes: [1]),
            ])
        withExtendedLifetime(token) {}
    }

    @Test("With a rule that keeps done items, rows reload an item that changed in place")
    func rowsWithCustomRule() throws {
        let everything = QueueRule(name: "everything", qualifies: { _, _ in true })
        let model = QueueViewModel(store: InMemoryQueueStore(), rule: everything, startDay: .monday)
        model.load()
        try model.add(title: "A", done: false)
        try model.add(title: "B", done: false)
        var changes: [ArrayChangeset] = []
        let token = model.rows.observeValues { change in changes.append(change.changeset) }
        try model.toggleDone(ItemID(2))
        #expect(model.rows.array.map(\.done) == [false, true])
        #expect(model.rows.array == model.manager?.queue.array.map(\.snapshot))
        #expect(changes == [ArrayChangeset(inserts: [0, 1]), ArrayChangeset(updates: [1])])
        withExtendedLifetime(token) {}
    }

    @Test("A released view model leaves the manager's observers; nothing leaks")
    func releasedCleanly() throws {
        let store = InMemoryQueueStore()
        weak var weakModel: QueueViewModel?
        weak var weakManager: QueueManager?
        do {
            let model = QueueViewModel(store: store, startDay: .monday)
            model.load()
            try model.add(title: "A")
            weakModel = model
            weakManager = model.manager
            #expect(model.manager!.observers.count == 1)
            #expect(model.subscriptions.count == 1)
        }
        #expect(weakModel == nil)
        #expect(weakManager == nil)
        // A manager that outlives its view model no longer lists it.
        let manager = try QueueManager(store: store, startDay: .monday)
        do {
            let model = QueueViewModel(store: store, startDay: .monday)
            manager.addObserver(model)
            #expect(manager.observers.count == 1)
        }
        #expect(manager.observers.isEmpty)
    }
}
