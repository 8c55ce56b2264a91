import ObserverGraph

/// What a screen shows of the queue, and what it can do with it.
///
/// It loads the manager from a store (`state` is `.loading` meanwhile), then exposes the queue
/// as a `ViewState`: `.empty`, `.result(items)`, or `.error` for a recoverable load failure such
/// as a corrupt store, which the screen can offer to retry. `rows` delivers the fine-grained
/// changes for a table. The view model observes its manager as a tracking observer; when it is
/// released, its edges disappear from the manager.
public final class QueueViewModel: GraphTrackingObserver, QueueManagerObserver {
    /// The node that records the view model's subscription to its manager.
    public let graphNode = GraphNode()
    /// What the screen shows (a new state is delivered only when it differs from the last).
    public let state = ObservableValue<ViewState<[QueueItemSnapshot]>>(.loading, skipsEqualValues: true)
    /// The manager, once loaded.
    public private(set) var manager: QueueManager?
    /// The queue as rows, with fine-grained changes (inserts, deletes, moves), once loaded.
    public private(set) var rows: ReadOnlyObservableArray<QueueItemSnapshot>?
    private let store: any QueueStore
    private let rule: QueueRule
    private let startDay: Weekday

    /// A view model for the queue kept in `store`; call `load()` to show it.
    ///
    /// Thread safety: for one thread (not `Sendable`). Callbacks: none.
    /// - Complexity: O(1).
    public init(store: any QueueStore, rule: QueueRule = .doneToday, startDay: Weekday) {
        self.store = store
        self.rule = rule
        self.startDay = startDay
    }

    /// Loads (or reloads) the queue: `.loading`, then `.result`, `.empty` or `.error`.
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` observers.
    /// - Complexity: O(n log n), n = stored items.
    public func load() {
        state.value = .loading
        do {
            let manager = try QueueManager(store: store, rule: rule, startDay: startDay)
            self.manager?.removeObserver(self)
            self.manager = manager
            rows = manager.queue.map(\.snapshot)
            manager.addObserver(self)
            refresh()
        } catch {
            state.value = .error(error)
        }
    }

    /// Adds an item for `day` (today by default).
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError` (nothing changes), `.store` when not loaded.
    /// - Complexity: O(n).
    public func add(title: String, day: Weekday? = nil, done: Bool = true) throws(QueueError) {
        try loaded().add(title: title, day: day, done: done)
    }

    /// Deletes an item.
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func delete(_ id: ItemID) throws(QueueError) { try loaded().delete(id) }

    /// Moves a queued item to a 1-based position.
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func move(_ id: ItemID, to position: Int) throws(QueueError) {
        try loaded().move(id, to: position)
    }

    /// Flips `done`.
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func toggleDone(_ id: ItemID) throws(QueueError) {
        let manager = try loaded()
        guard let item = manager.item(id) else { throw .unknownItem(id) }
        try manager.setDone(id, !item.done.value)
    }

    /// Sets an item's day.
    ///
    /// Thread safety: the view model's thread. Callbacks: `state` and `rows` observers.
    /// - Throws: `QueueError`. - Complexity: O(n).
    public func setDay(_ id: ItemID, _ day: Weekday) throws(QueueError) { try loaded().setDay(id, day) }

    /// Refreshes `state` after every change the manager reports.
    ///
    /// Thread safety: called by the manager on its thread. Callbacks: `state` observers.
    /// - Complexity: O(n).
    public func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        refresh()
    }

    private func refresh() {
        guard let manager else { return }
        state.value = ViewState(
            Result<[QueueItemSnapshot], Never>.success(manager.queue.array.map(\.snapshot)))
    }

    private func loaded() throws(QueueError) -> QueueManager {
        guard let manager else {
            if case .error(let error as StoreError) = state.value { throw .store(error) }
            throw .store(.unreadable(path: "the store", reason: "the queue is not loaded yet"))
        }
        return manager
    }
}
