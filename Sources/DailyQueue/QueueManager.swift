import Foundation
import ObserverGraph

/// The daily queue: the items of the current day that qualify (by `rule`), in order.
///
/// The manager is observable (it reports a `QueueEvent` for everything that happens) and a
/// tracking observer: it subscribes to every item it queues. When a queued item stops
/// qualifying (its `done` becomes false, or its day stops being today, with the default rule),
/// the manager takes it out of the queue and unsubscribes from it: `isSubscribed(to: item)`
/// becomes false. Leaving the queue is not deletion: the item stays stored, and joins the end of
/// the queue again when it qualifies again. Only `delete` deletes.
///
/// `queue` is an `ObservableArray`, so observers see inserts, deletes and moves with indices.
/// Every change is saved to the store at once, only if the store still holds what this manager
/// read or last saved: a save that another process (or another manager) made meanwhile is never
/// overwritten. The change then fails with `.store(.changedElsewhere)`, and the manager's later
/// saves fail the same way: make a new manager, which reads the store again (`QueueViewModel`
/// does, and runs the action again on it). The command line makes one manager per command,
/// inside a transaction of the store, where nothing else can save.
///
/// Thread safety: a manager lives where it is made (it is not `Sendable`, so Swift keeps it
/// there): on the main actor in an app, on one thread in a command-line tool. Its `queue` and
/// items are `Sendable` and may be observed from anywhere. A manager made on the main actor
/// hears of a change of its items on the main actor, wherever the change was made: at once for
/// one made there (before the setter returns), on the actor's next turn for one made on another
/// thread. A manager made elsewhere (nonisolated code, another actor) hears of it on the thread
/// that made the change, before the setter returns: change its items only where it lives.
public final class QueueManager: GraphObservable, GraphTrackingObserver, QueueItemObserver {
    /// The node that holds the manager's observers and its subscriptions to items.
    public let graphNode = GraphNode()
    /// The queued items, in order; their `queuePosition` is their index + 1.
    public let queue = ObservableArray<QueueItem>()
    /// Which items are queued.
    public let rule: QueueRule
    /// Every stored item, queued or not, in creation order.
    public private(set) var items: [QueueItem] = []
    /// The day the queue is for.
    public private(set) var currentDay: Weekday
    private var nextID: Int
    private let store: any QueueStore
    /// What the store holds as this manager read or last saved it: a save checks it first.
    private var revision: StoreRevision
    /// A save that failed while reacting to an item change, to be reported by the operation
    /// that made the change.
    private var failedSave: QueueError?
    /// The main actor, for a manager made there (`nil` otherwise): its subscriptions to items
    /// are recorded with it, so item changes reach it there. (Not another actor: a post from an
    /// item's nonisolated observation could only queue for it, so a change made on that actor
    /// would reach the manager after the call that made it, and the actor would be held by its
    /// items' nodes, which the manager holds.)
    private let home: (any Actor)?

    /// The last save that failed while the manager reacted to a change made directly on an item
    /// (not through the manager); `nil` once a later save succeeds. Changes made through the
    /// manager's methods throw instead.
    ///
    /// Thread safety: the manager's thread. Callbacks: none.
    /// - Complexity: O(1).
    public private(set) var lastSaveFailure: QueueError?

    /// Loads the queue from `store` (or starts an empty one for `startDay`), restoring items,
    /// positions and the manager's subscriptions to the queued items.
    ///
    /// The queue holds exactly the items that qualify under `rule` on the stored day. A store
    /// that disagrees (written under another rule, or edited by hand) is brought in line in
    /// memory as a day change would: queued items that do not qualify leave, the others keep
    /// their order, and stored items that qualify but were not queued join the end, in creation
    /// order. The next save writes the result.
    ///
    /// Thread safety: creates a manager that lives where it is made, `isolation` (the caller's
    /// actor, `nil` in nonisolated code; see `QueueManager` for where it hears of item changes).
    /// Callbacks: none.
    /// - Throws: the store's `StoreError` (nothing is written).
    /// - Complexity: O(n log n), n = stored items.
    public init(
        store: any QueueStore, rule: QueueRule = .doneToday, startDay: Weekday,
        isolation: isolated (any Actor)? = #isolation
    ) throws(StoreError) {
        self.store = store
        self.rule = rule
        home = isolation.flatMap { $0 === MainActor.shared ? $0 : nil }
        let (loaded, revision) = try store.loadWithRevision()
        self.revision = revision
        let stored = loaded ?? StoredQueue(currentDay: startDay)
        currentDay = stored.currentDay
        nextID = stored.nextID
        items = stored.items.map {
            QueueItem(
                id: $0.id, title: $0.title, done: $0.done, dayOfTheWeek: $0.dayOfTheWeek,
                queuePosition: $0.queuePosition)
        }
        // The store checks that the positions are 1...k; the rule decides who is queued.
        let day = stored.currentDay
        var queued = items.filter { $0.queuePosition != nil }.sorted { $0.queuePosition! < $1.queuePosition! }
        queued.removeAll { !rule.qualifies($0.snapshot, on: day) }
        queued += items.filter { $0.queuePosition == nil && rule.qualifies($0.snapshot, on: day) }
        let kept = Set(queued.map(ObjectIdentifier.init))
        for item in items where !kept.contains(ObjectIdentifier(item)) { item.queuePosition = nil }
        queue.reload(with: queued)
        renumber()
        for item in queued { item.addObserver(self, isolation: home) }
    }

    /// The manager's name in graph pictures, with its day: `queue manager (Tuesday)`.
    ///
    /// Thread safety: the manager's thread. Callbacks: none.
    /// - Complexity: O(1).
    public var graphDisplayName: String { "queue manager (\(currentDay))" }

    /// The stored item with `id`, or `nil`.
    ///
    /// Thread safety: the manager's thread. Callbacks: none.
    /// - Complexity: O(n), n = stored items.
    public func item(_ id: ItemID) -> QueueItem? {
        items.first { $0.id == id }
    }

    /// Stores a new item and, if it qualifies today, appends it to the queue (and subscribes
    /// to it). The title is trimmed and checked by `ItemTitle.validated(_:)`.
    ///
    /// Thread safety: the manager's thread.
    /// Callbacks: `queue` observers (inserts), then `.added` or `.stored` to manager observers.
    /// - Throws: `.emptyTitle`, `.titleTooLong`, `.characterTooComplex`, `.controlCharacterInTitle`,
    ///   `.noIDLeft` (nothing changes); `.store` if saving failed (the store keeps its old content).
    /// - Complexity: O(n) for the save, n = stored items.
    @discardableResult
    public func add(title: String, day: Weekday? = nil, done: Bool = true) throws(QueueError) -> QueueItem {
        let trimmed = try ItemTitle.validated(title)
        guard nextID < Int.max else { throw .noIDLeft }
        let item = QueueItem(id: ItemID(nextID), title: trimmed, done: done, dayOfTheWeek: day ?? currentDay)
        nextID += 1
        items.append(item)
        if qualifies(item) {
            enqueue(item)
            try save()
            report(.added(item.snapshot, position: queue.count))
        } else {
            try save()
            report(.stored(item.snapshot, because: rule.reasonNotQueued(item.snapshot, on: currentDay)))
        }
        return item
    }

    /// Deletes an item: out of the queue (positions after it move up) and out of the store.
    ///
    /// Thread safety: the manager's thread.
    /// Callbacks: `queue` observers (deletes), then `.deleted`.
    /// - Throws: `.unknownItem` (nothing changes); `.store` if saving failed.
    /// - Complexity: O(n).
    public func delete(_ id: ItemID) throws(QueueError) {
        guard let item = item(id) else { throw .unknownItem(id) }
        let position = item.queuePosition
        if position != nil { dequeue(item) }
        items.removeAll { $0 === item }
        try save()
        report(.deleted(item.snapshot, position: position))
    }

    /// Moves a queued item to `position` (1...count); the others shift.
    ///
    /// Thread safety: the manager's thread.
    /// Callbacks: `queue` observers (one move), then `.moved`; nothing when already there.
    /// - Throws: `.unknownItem`, `.notQueued`, `.badPosition` (nothing changes); `.store`.
    /// - Complexity: O(n).
    public func move(_ id: ItemID, to position: Int) throws(QueueError) {
        guard let item = item(id) else { throw .unknownItem(id) }
        guard let from = item.queuePosition else { throw .notQueued(id) }
        guard (1...max(queue.count, 1)).contains(position), queue.count > 0 else {
            throw .badPosition(position, count: queue.count)
        }
        guard from != position else { return }
        do {
            try queue.move(from: from - 1, to: position - 1)
        } catch {
            throw .badPosition(position, count: queue.count)
        }
        renumber()
        try save()
        report(.moved(item.snapshot, from: from, to: position))
    }

    /// Sets `done`. A queued item that stops qualifying leaves the queue (through its own
    /// callback); a stored item that starts qualifying joins the end.
    ///
    /// Thread safety: the manager's thread.
    /// Callbacks: the item's `done` observers; `queue` observers; `.left`, `.entered` or
    /// `.changed`. Nothing when the value does not change.
    /// - Throws: `.unknownItem` (nothing changes); `.store`.
    /// - Complexity: O(n).
    public func setDone(_ id: ItemID, _ done: Bool) throws(QueueError) {
        guard let item = item(id) else { throw .unknownItem(id) }
        try change(item, because: "done became \(done)") { item.done.value = done }
    }

    /// Sets the item's day of the week; the same rules as `setDone`.
    ///
    /// Thread safety: the manager's thread. Callbacks: as `setDone`.
    /// - Throws: `.unknownItem` (nothing changes); `.store`.
    /// - Complexity: O(n).
    public func setDay(_ id: ItemID, _ day: Weekday) throws(QueueError) {
        guard let item = item(id) else { throw .unknownItem(id) }
        try change(item, because: "day became \(day)") { item.dayOfTheWeek.value = day }
    }

    /// Changes the current day (the day rolls over): in ONE queue change, items that no longer
    /// qualify leave and stored items that now qualify join the end, in creation order.
    ///
    /// Thread safety: the manager's thread.
    /// Callbacks: `queue` observers once; `.dayChanged`, then `.left` and `.entered` per item.
    /// - Throws: `.store` if saving failed.
    /// - Complexity: O(n log n), plus O(q) for each item that leaves (the queued items after it
    ///   move up), q = queued items.
    public func setCurrentDay(_ day: Weekday) throws(QueueError) {
        guard day != currentDay else { return }
        let previous = currentDay
        currentDay = day
        let leaving = queue.array.filter { !qualifies($0) }
        let joining = items.filter { $0.queuePosition == nil && qualifies($0) }
        let leavingPositions = leaving.map { ($0, $0.queuePosition!) }
        let leavingIDs = Set(leaving.map(ObjectIdentifier.init))
        queue.batch { batch in
            for index in batch.elements.indices.reversed()
            where leavingIDs.contains(ObjectIdentifier(batch.elements[index])) {
                _ = try? batch.remove(at: index)
            }
            batch.append(contentsOf: joining)
        }
        for item in leaving {
            item.queuePosition = nil
            item.removeObserver(self)
        }
        for item in joining { item.addObserver(self, isolation: home) }
        renumber()
        // The positions the change gave: observers of the reports below may change the queue
        // again (delete an item that joined), and each report tells what this change did.
        let joiningPositions = joining.map { ($0, $0.queuePosition ?? 0) }
        try save()
        report(.dayChanged(from: previous, to: day))
        for (item, position) in leavingPositions {
            report(.left(item.snapshot, position: position, because: "not due \(day)"))
        }
        for (item, position) in joiningPositions {
            report(.entered(item.snapshot, position: position, because: "due \(day)"))
        }
    }

    // MARK: - Observing the queued items

    /// A queued item changed: if it stopped qualifying, it leaves the queue and the manager
    /// unsubscribes from it. Runs inside the item's post; the kit makes that safe.
    ///
    /// Thread safety: called by the kit where the manager lives (see `QueueManager`).
    /// Callbacks: `queue` observers, then `.left`.
    /// - Complexity: O(n).
    public func item(_ item: QueueItem, didChange change: QueueItemChange) {
        guard item.queuePosition != nil, !qualifies(item) else { return }
        let position = item.queuePosition!
        dequeue(item)
        do {
            try save()
        } catch {
            failedSave = error
            lastSaveFailure = error
        }
        report(.left(item.snapshot, position: position, because: change.description))
    }

    /// The kit subscribed the manager to an observable: passed on to manager observers.
    ///
    /// Thread safety: called by the kit on the manager's thread.
    /// Callbacks: `queueManager(_:didSubscribe:to:)` of manager observers.
    /// - Complexity: O(observers).
    public func didSubscribe(to observable: any GraphObservable) {
        guard let item = observable as? QueueItem else { return }
        broadcast(as: (any QueueManagerObserver).self) { $0.queueManager(self, didSubscribe: true, to: item) }
    }

    /// The kit unsubscribed the manager from an observable: passed on to manager observers.
    ///
    /// Thread safety: called by the kit on the manager's thread.
    /// Callbacks: `queueManager(_:didSubscribe:to:)` of manager observers.
    /// - Complexity: O(observers).
    public func didUnsubscribe(from observable: any GraphObservable) {
        guard let item = observable as? QueueItem else { return }
        broadcast(as: (any QueueManagerObserver).self) {
            $0.queueManager(self, didSubscribe: false, to: item)
        }
    }

    // MARK: - Internals

    private func qualifies(_ item: QueueItem) -> Bool {
        rule.qualifies(item.snapshot, on: currentDay)
    }

    /// Runs `body` (which sets a value of `item`), then queues the item if it now qualifies
    /// and was not queued; leaving is handled by `item(_:didChange:)`.
    private func change(_ item: QueueItem, because reason: String, _ body: () -> Void) throws(QueueError) {
        let wasQueued = item.queuePosition != nil
        let before = item.snapshot
        failedSave = nil
        body()
        // The item's own callback may already have taken it out of the queue and saved.
        if let failure = failedSave {
            failedSave = nil
            throw failure
        }
        guard item.snapshot != before else { return }  // unchanged: nothing to save or report
        if !wasQueued && qualifies(item) {
            enqueue(item)
            try save()
            report(.entered(item.snapshot, position: queue.count, because: reason))
        } else if !wasQueued || item.queuePosition != nil {
            try save()
            report(.changed(item.snapshot, because: reason))
        }
    }

    private func enqueue(_ item: QueueItem) {
        queue.append(item)
        item.queuePosition = queue.count
        item.addObserver(self, isolation: home)
    }

    private func dequeue(_ item: QueueItem) {
        guard let index = queue.array.firstIndex(where: { $0 === item }) else { return }
        _ = try? queue.remove(at: index)
        item.queuePosition = nil
        item.removeObserver(self)
        renumber()
    }

    private func renumber() {
        for (index, item) in queue.array.enumerated() { item.queuePosition = index + 1 }
    }

    private func save() throws(QueueError) {
        let stored = StoredQueue(
            currentDay: currentDay, nextID: nextID,
            items: items.map {
                StoredItem(
                    id: $0.id, title: $0.title, done: $0.done.value, dayOfTheWeek: $0.dayOfTheWeek.value,
                    queuePosition: $0.queuePosition)
            })
        do {
            revision = try store.save(stored, ifUnchangedSince: revision)
            lastSaveFailure = nil
        } catch {
            throw .store(error)
        }
    }

    private func report(_ event: QueueEvent) {
        broadcast(as: (any QueueManagerObserver).self) { $0.queueManager(self, didReport: event) }
    }
}
