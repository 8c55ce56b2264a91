import ObserverGraph

/// What a screen shows of the queue, and what it can do with it.
///
/// It loads the manager from a store (`state` is `.loading` meanwhile), then exposes the queue
/// as a `ViewState`: `.empty`, `.result(items)`, or `.error` for a recoverable load failure such
/// as a corrupt store, which the screen can offer to retry. `rows` delivers the fine-grained
/// changes for a table. The view model observes its manager as a tracking observer; when it is
/// released, its edges disappear from the manager.
///
/// It is what a Swift 6 app writes: `@MainActor`, like the screen that shows it. Its conformance
/// to the kit's `GraphTrackingObserver` is nonisolated (the kit requires that, and the defaults
/// need nothing else); its conformance to the app's `QueueManagerObserver` is isolated to the
/// main actor, so the manager's reports run as plain main-actor code. The manager belongs to the
/// view model and is only used on the main actor, so its reports arrive synchronously: after
/// `add(title:)` returns, `state` and `rows` already show the new item. An item changed on
/// another thread (items are `Sendable`) reaches the manager on the main actor, on its next turn.
///
/// Other processes may change the same store (the command line, another window). The manager
/// never overwrites their saves: when one came since the manager read the store, the action's
/// save is refused (`StoreError.changedElsewhere`). The view model then reads the store again
/// (a new manager, shown at once) and runs the action once more on what it read: an `add`
/// adds, a `delete` of an item someone else deleted fails with `.unknownItem`. After any other
/// failed save (a full disk), it reads the store again too, and throws: what it shows is what is
/// stored, and the change that failed is not saved by a later one.
@MainActor
public final class QueueViewModel: GraphTrackingObserver, @MainActor QueueManagerObserver {
    /// The node that records the view model's subscription to its manager.
    public let graphNode = GraphNode()
    /// What the screen shows (a new state is delivered only when it differs from the last).
    public let state = ObservableValue<ViewState<[QueueItemSnapshot]>>(.loading, skipsEqualValues: true)
    /// The manager, once loaded.
    public private(set) var manager: QueueManager?
    /// The queued items as rows, in queue order, with fine-grained changes for a table
    /// (inserts, deletes, moves, and reloads of items whose title, `done` or day changed). Empty
    /// until loaded. Kept by diffing the queue after every report of the manager, so it is right
    /// for every rule, also when an item changes without leaving the queue.
    public var rows: ReadOnlyObservableArray<QueueItemSnapshot> { rowStorage }
    private let rowStorage = ObservableArray<QueueItemSnapshot>()
    private let store: any QueueStore
    private let rule: QueueRule
    private let startDay: Weekday

    /// A view model for the queue kept in `store`; call `load()` to show it.
    ///
    /// Isolation: the main actor. Callbacks: none.
    /// - Complexity: O(1).
    public init(store: any QueueStore, rule: QueueRule = .doneToday, startDay: Weekday) {
        self.store = store
        self.rule = rule
        self.startDay = startDay
    }

    /// Loads (or reloads) the queue: `.loading`, then `.result`, `.empty` or `.error`.
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Complexity: O(n log n), n = stored items.
    public func load() {
        state.set(.loading)
        do {
            let manager = try QueueManager(store: store, rule: rule, startDay: startDay)
            self.manager?.removeObserver(self)
            self.manager = manager
            manager.addObserver(self)
            refresh()
        } catch {
            state.set(.error(error))
        }
    }

    /// Adds an item for `day` (today by default).
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError` (nothing changes), `.store` when not loaded.
    /// - Complexity: O(n).
    public func add(title: String, day: Weekday? = nil, done: Bool = true) throws(QueueError) {
        try perform { manager throws(QueueError) in try manager.add(title: title, day: day, done: done) }
    }

    /// Deletes an item.
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func delete(_ id: ItemID) throws(QueueError) {
        try perform { manager throws(QueueError) in try manager.delete(id) }
    }

    /// Moves a queued item to a 1-based position.
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func move(_ id: ItemID, to position: Int) throws(QueueError) {
        try perform { manager throws(QueueError) in try manager.move(id, to: position) }
    }

    /// Flips `done`.
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func toggleDone(_ id: ItemID) throws(QueueError) {
        try perform { manager throws(QueueError) in
            guard let item = manager.item(id) else { throw .unknownItem(id) }
            try manager.setDone(id, !item.done.value)
        }
    }

    /// Sets an item's day.
    ///
    /// Isolation: the main actor. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func setDay(_ id: ItemID, _ day: Weekday) throws(QueueError) {
        try perform { manager throws(QueueError) in try manager.setDay(id, day) }
    }

    /// Refreshes `state` and `rows` after every change the manager reports.
    ///
    /// Isolation: the main actor (an isolated conformance: the manager's broadcast reaches it
    /// there). Callbacks: `state` and `rows` observers.
    /// - Complexity: O(n) for a few changes (the rows are diffed by item id).
    public func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        refresh()
    }

    private func refresh() {
        guard let manager else { return }
        let snapshots = manager.queue.array.map(\.snapshot)
        _ = rowStorage.replace(with: snapshots, identifiedBy: \.id)
        state.set(ViewState(Result<[QueueItemSnapshot], Never>.success(snapshots)))
    }

    /// Runs `action` on the manager. If its save failed, the store is read again (a new
    /// manager, shown), so that the screen shows what is stored and the change that failed is
    /// not saved later by another; if the save was refused because the store changed elsewhere,
    /// `action` then runs once more, on what was read.
    private func perform(_ action: (QueueManager) throws(QueueError) -> Void) throws(QueueError) {
        let manager = try loaded()
        do {
            try action(manager)
        } catch .store(let failure) {
            load()
            guard case .changedElsewhere = failure else { throw .store(failure) }
            // The store could not be read again: `state` shows why; the action is not retried.
            guard let reloaded = self.manager, reloaded !== manager else { throw .store(storeFailure()) }
            try action(reloaded)
        }
    }

    /// Why the store cannot be used now: the error `state` shows, or that it changed elsewhere.
    private func storeFailure() -> StoreError {
        if case .error(let error as StoreError) = state.value { return error }
        return .changedElsewhere(path: "the store")
    }

    private func loaded() throws(QueueError) -> QueueManager {
        guard let manager else {
            if case .error(let error as StoreError) = state.value { throw .store(error) }
            throw .store(.unreadable(path: "the store", reason: "the queue is not loaded yet"))
        }
        return manager
    }
}
