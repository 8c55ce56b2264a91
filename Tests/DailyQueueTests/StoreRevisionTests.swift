import DailyQueue
import Foundation
import ObserverGraph
import Testing

/// A manager reads its store once and saves its whole queue after each change: each save is
/// checked against what the manager read or last saved, so another process's save made in
/// between is refused, never overwritten. The view model reads again and runs the action again.
@Suite("DailyQueue: a manager never overwrites a save made since it read the store")
struct StoreRevisionTests {
    /// The titles stored at `url`, in creation order.
    static func stored(_ url: URL) throws -> [String] {
        try JSONFileQueueStore(url: url).load()?.items.map(\.title) ?? []
    }

    @Test("A file: another process's add, then the manager's change is refused; the file keeps that add")
    func fileStoreRefusesAStaleSave() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let manager = try QueueManager(store: JSONFileQueueStore(url: url), startDay: .monday)
        let first = try manager.add(title: "from the app")
        // Another process: a command's transaction, with a manager of its own.
        let result = try DailyQueueCommand.run(["add", "from the command line", "--store", url.path])
        #expect(result.status == 0, "\(result.err)")
        #expect(try Self.stored(url) == ["from the app", "from the command line"])

        #expect(throws: QueueError.store(.changedElsewhere(path: url.path))) {
            try manager.add(title: "lost?")
        }
        #expect(throws: QueueError.store(.changedElsewhere(path: url.path))) {
            try manager.setDone(first.id, false)
        }
        #expect(try Self.stored(url) == ["from the app", "from the command line"])
        // A new manager reads the store again and saves.
        let fresh = try QueueManager(store: JSONFileQueueStore(url: url), startDay: .monday)
        try fresh.add(title: "after reading again")
        #expect(try Self.stored(url) == ["from the app", "from the command line", "after reading again"])
    }

    @Test("A file that appears after the manager read an empty store is not overwritten")
    func fileCreatedMeanwhile() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let manager = try QueueManager(store: JSONFileQueueStore(url: url), startDay: .monday)
        let other = try QueueManager(store: JSONFileQueueStore(url: url), startDay: .monday)
        try other.add(title: "first")
        #expect(throws: QueueError.store(.changedElsewhere(path: url.path))) {
            try manager.add(title: "second")
        }
        #expect(try Self.stored(url) == ["first"])
    }

    @Test("In memory: two managers on one store; the one that read before the other's save is refused")
    func memoryStore() throws {
        let store = InMemoryQueueStore()
        let one = try QueueManager(store: store, startDay: .tuesday)
        let two = try QueueManager(store: store, startDay: .tuesday)
        try one.add(title: "A")
        #expect(throws: QueueError.store(.changedElsewhere(path: "memory"))) { try two.add(title: "B") }
        #expect(try store.load()?.items.map(\.title) == ["A"])
        #expect(store.saveCount == 1)
        let three = try QueueManager(store: store, startDay: .tuesday)
        try three.add(title: "B")
        #expect(try store.load()?.items.map(\.title) == ["A", "B"])
        // `save(_:)` stays unconditional, and moves the revision: `three` is now behind.
        try store.save(StoredQueue(currentDay: .tuesday))
        #expect(throws: QueueError.store(.changedElsewhere(path: "memory"))) { try three.add(title: "C") }
        #expect(try store.load()?.items.isEmpty == true)
    }

    @Test("The view model reads again and adds: both the other process's item and the app's are stored")
    @MainActor
    func viewModelAddAfterAnotherProcess() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let model = QueueViewModel(store: JSONFileQueueStore(url: url), startDay: .monday)
        model.load()
        var states: [String] = []
        let token = model.state.observeValues { state in
            switch state {
            case .loading: states.append("loading")
            case .empty: states.append("empty")
            case .result(let items): states.append(items.map(\.title).joined(separator: ","))
            case .error(let error): states.append("error: \(error)")
            }
        }
        let result = try DailyQueueCommand.run([
            "add", "--done", "from the command line", "--store", url.path,
        ])
        #expect(result.status == 0, "\(result.err)")
        try model.add(title: "from the app")
        #expect(try Self.stored(url) == ["from the command line", "from the app"])
        #expect(model.rows.array.map(\.title) == ["from the command line", "from the app"])
        // The refused add showed nothing (its save came before its report); then the store read
        // again, then the add on it.
        #expect(
            states == ["empty", "loading", "from the command line", "from the command line,from the app"])
        withExtendedLifetime(token) {}
    }

    @Test("The view model's delete of an item deleted elsewhere: unknownItem, and the store as it is")
    @MainActor
    func viewModelDeleteAfterAnotherProcess() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let model = QueueViewModel(store: JSONFileQueueStore(url: url), startDay: .monday)
        model.load()
        try model.add(title: "A")
        try model.add(title: "B")
        let a = try #require(model.manager?.queue.array.first?.id)
        let result = try DailyQueueCommand.run(["remove", "\(a.rawValue)", "--store", url.path])
        #expect(result.status == 0, "\(result.err)")
        #expect(throws: QueueError.unknownItem(a)) { try model.delete(a) }
        #expect(try Self.stored(url) == ["B"])
        #expect(model.rows.array.map(\.title) == ["B"])
        #expect(model.state.value.result?.map(\.title) == ["B"])
    }

    @Test("After a failed save the view model shows what is stored; a later save leaves out the failed add")
    @MainActor
    func viewModelFailedSave() throws {
        let store = FlakyStore()
        let model = QueueViewModel(store: store, startDay: .tuesday)
        model.load()
        try model.add(title: "A")
        store.fail(true)
        #expect(throws: QueueError.store(.unwritable(path: "flaky", reason: "disk full"))) {
            try model.add(title: "B")
        }
        #expect(model.state.value.result?.map(\.title) == ["A"])
        #expect(model.rows.array.map(\.title) == ["A"])
        #expect(model.manager?.items.map(\.title) == ["A"])
        store.fail(false)
        try model.add(title: "C")
        #expect(try store.load()?.items.map(\.title) == ["A", "C"])
        #expect(model.rows.array.map(\.title) == ["A", "C"])
    }

    @Test("An observer that deletes an item joining on a day change: no crash; each report tells that change")
    func dayChangeObserverDeletesAJoiningItem() throws {
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .monday)
        let a = try manager.add(title: "A", day: .tuesday)
        let b = try manager.add(title: "B", day: .tuesday)
        let deleter = DeleteOnDayChange(manager: manager, target: a.id)
        manager.addObserver(deleter)
        try manager.setCurrentDay(.tuesday)
        #expect(manager.queue.array.map(\.title) == ["B"])
        #expect(manager.items.map(\.title) == ["B"])
        #expect(
            deleter.log == [
                "day changed from Monday to Tuesday", "deleted A (was 1)", "entered A at 1", "entered B at 2",
            ])
        withExtendedLifetime((deleter, b)) {}
    }
}

/// Deletes `target` when it hears of a day change, and logs the reports it gets.
final class DeleteOnDayChange: GraphObserver, QueueManagerObserver {
    let graphDisplayName = "deleter"
    private weak var manager: QueueManager?
    private var target: ItemID?
    private(set) var log: [String] = []

    init(manager: QueueManager, target: ItemID) {
        self.manager = manager
        self.target = target
    }

    func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        switch event {
        case .dayChanged(let from, let to):
            log.append("day changed from \(from) to \(to)")
            if let target {
                self.target = nil
                try? manager.delete(target)
            }
        case .deleted(let item, let position):
            log.append("deleted \(item.title) (was \(position.map(String.init) ?? "-"))")
        case .entered(let item, let position, _):
            log.append("entered \(item.title) at \(position)")
        default:
            log.append("\(event)")
        }
    }
}

@Suite("DailyQueue: a transaction's hold on the lock ends with it", .timeLimit(.minutes(3)))
struct TransactionHoldTests {
    @Test(
        "A task started in a transaction and saving after it ended takes the lock: busy while another holds it"
    )
    func inheritedHoldEnds() async throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let store = JSONFileQueueStore(url: url, lockTimeout: 0.2)
        try store.save(StoredQueue(currentDay: .monday))
        let otherHolds = DispatchSemaphore(value: 0)  // another thread holds the lock
        let taskDone = DispatchSemaphore(value: 0)  // the task's save returned
        let outcome = GraphLock("")
        let task = try store.transaction(.write) {
            Task {
                // Runs once the transaction ended and another transaction holds the lock. The
                // task may start late (the shared pool is busy while the whole suite runs): the
                // other transaction waits for it, with a deadline far beyond any such delay.
                _ = otherHolds.wait(timeout: .now() + 120)
                do {
                    try store.save(StoredQueue(currentDay: .friday))
                    outcome.withLock { $0 = "saved" }
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                }
                taskDone.signal()
            }
        }
        Thread.detachNewThread {
            try? JSONFileQueueStore(url: url).transaction(.write) {
                otherHolds.signal()
                _ = taskDone.wait(timeout: .now() + 120)
            }
        }
        await task.value
        #expect(
            outcome.withLock { $0 }.hasPrefix("the store \(url.path) is busy"), "\(outcome.withLock { $0 })")
        #expect(try store.load()?.currentDay == .monday)
    }
}
