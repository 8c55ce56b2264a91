import DailyQueue
import Dispatch
import ObserverGraph
import Testing

/// Whether the caller runs on the main queue, the main actor's executor. (Not a thread check: a
/// test runner that parks the main thread in `dispatch_main` has the main queue drained by
/// worker threads.)
private enum MainQueue {
    static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// Records each report of a manager, and whether it came on the main queue.
private final class PlaceRecorder: GraphObserver, QueueManagerObserver, Sendable {
    let log = GraphLock<[String]>([])

    func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        let place = MainQueue.isCurrent ? "main" : "elsewhere"
        log.withLock { $0.append("\(event) [\(place)]") }
    }
}

/// Polls `condition` on the main actor until it holds or two minutes pass.
@MainActor
private func eventually(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(120)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// An actor that keeps a queue manager, as an app's model actor would.
private actor QueueHost {
    private var manager: QueueManager?
    private let recorder = EventRecorder()

    /// Makes the manager here, adds an item (queued), and keeps both.
    func start() throws {
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .monday)
        // With no isolation: the record of an actor would hold this actor (the kit's documented
        // rule for an actor that owns both sides); the manager's reports are broadcasts anyway.
        manager.addObserver(recorder, isolation: nil)
        try manager.add(title: "Laundry")
        self.manager = manager
    }

    /// Sets the item's `done` here; what the manager reported so far.
    func undo() throws -> [String] {
        try manager?.setDone(ItemID(1), false)
        return recorder.events
    }
}

// The items are `Sendable`: an app may change one on any thread. The manager, which is not, used
// to be called on that thread (a data race with the main actor, where the app's manager lives).

@Suite("DailyQueue: a manager made on the main actor hears of item changes there", .timeLimit(.minutes(3)))
@MainActor
struct ManagerIsolationTests {
    @Test("An item changed on another thread: the manager reacts on the main actor, on its next turn")
    func itemChangedOnAnotherThread() async throws {
        _ = MainQueue.key
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .monday)
        let recorder = PlaceRecorder()
        manager.addObserver(recorder)
        let item = try manager.add(title: "Laundry")
        await Task.detached { item.done.value = false }.value
        #expect(await eventually { manager.queue.count == 0 })
        #expect(
            recorder.log.withLock { $0 } == [
                "added #1 \"Laundry\" at position 1 [main]",
                "removed #1 \"Laundry\" from position 1 (done became false) [main]",
            ])
        #expect(!manager.isSubscribed(to: item))
        withExtendedLifetime(recorder) {}
    }

    @Test("An item changed on the main actor: the manager reacts before the setter returns")
    func itemChangedOnTheMainActor() throws {
        _ = MainQueue.key
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .monday)
        let recorder = PlaceRecorder()
        manager.addObserver(recorder)
        let item = try manager.add(title: "Dishes")
        item.dayOfTheWeek.value = .friday
        #expect(manager.queue.count == 0)
        #expect(
            recorder.log.withLock { $0 } == [
                "added #1 \"Dishes\" at position 1 [main]",
                "removed #1 \"Dishes\" from position 1 (day became Friday) [main]",
            ])
        withExtendedLifetime(recorder) {}
    }

    @Test("A manager made on another actor reacts there before the setter returns: one report")
    func managerOnAnotherActor() async throws {
        let host = QueueHost()
        try await host.start()
        #expect(
            try await host.undo() == [
                "added #1 \"Laundry\" at position 1",
                "removed #1 \"Laundry\" from position 1 (done became false)",
            ])
    }

    @Test("An actor that keeps its manager, with queued items, goes when released")
    func actorKeepingItsManagerGoes() async throws {
        weak var gone: QueueHost?
        do {
            let host = QueueHost()
            try await host.start()
            gone = host
        }
        #expect(await eventually { gone == nil })
    }
}
