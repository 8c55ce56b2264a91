import ObserverGraph

/// What the queue manager reports to its observers, one event per thing that happened.
public enum QueueEvent: Equatable, Sendable, CustomStringConvertible {
    /// A new item was stored and queued at `position`.
    case added(QueueItemSnapshot, position: Int)
    /// A new item was stored but does not qualify for the queue today, for the reason given.
    case stored(QueueItemSnapshot, because: String)
    /// An item left the queue from `position` because it stopped qualifying (it stays stored).
    case left(QueueItemSnapshot, position: Int, because: String)
    /// A stored item qualified again and joined the end of the queue.
    case entered(QueueItemSnapshot, position: Int, because: String)
    /// An item was deleted; `position` is where it was queued, if it was.
    case deleted(QueueItemSnapshot, position: Int?)
    /// A queued item was moved.
    case moved(QueueItemSnapshot, from: Int, to: Int)
    /// A stored item changed without joining or leaving the queue.
    case changed(QueueItemSnapshot, because: String)
    /// The current day changed.
    case dayChanged(from: Weekday, to: Weekday)

    /// One line for people, e.g. `removed "Laundry" from position 2 (done became false)`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .added(let item, let position): "added \(item) at position \(position)"
        case .stored(let item, let reason): "stored \(item) (not queued: \(reason))"
        case .left(let item, let position, let reason):
            "removed \(item) from position \(position) (\(reason))"
        case .entered(let item, let position, let reason):
            "queued \(item) at position \(position) (\(reason))"
        case .deleted(let item, let position?): "deleted \(item) from position \(position)"
        case .deleted(let item, nil): "deleted \(item)"
        case .moved(let item, let from, let to): "moved \(item) from position \(from) to \(to)"
        case .changed(let item, let reason): "changed \(item) (\(reason))"
        case .dayChanged(let from, let to): "today is \(to) (was \(from))"
        }
    }
}

/// Observes a queue manager: the app's message protocol.
///
/// It does not refine the kit's `GraphObserver`, so that a `@MainActor` type may adopt it with a
/// conformance isolated to the main actor (the kit's own protocols refuse isolated conformances;
/// the observer adopts those separately, nonisolated).
public protocol QueueManagerObserver {
    /// The manager reports `event`, after the queue changed; called with no lock held.
    func queueManager(_ manager: QueueManager, didReport event: QueueEvent)

    /// The manager subscribed to an item (`subscribed == true`) or unsubscribed from it: the
    /// kit's own callbacks, passed on. Optional.
    func queueManager(_ manager: QueueManager, didSubscribe subscribed: Bool, to item: QueueItem)
}

extension QueueManagerObserver {
    /// Default: does nothing; implement it to watch the manager's subscriptions to items.
    ///
    /// Thread safety: called on the manager's thread. Callbacks: none.
    /// - Complexity: O(1).
    public func queueManager(_ manager: QueueManager, didSubscribe subscribed: Bool, to item: QueueItem) {}
}

/// Why a queue operation was refused. Nothing changed.
public enum QueueError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No item has this id.
    case unknownItem(ItemID)
    /// The item is not in the queue (so it has no position to move from).
    case notQueued(ItemID)
    /// The position is outside 1...count.
    case badPosition(Int, count: Int)
    /// The title is empty.
    case emptyTitle
    /// Every id has been given: the next one would overflow (a store whose `nextID` is
    /// `Int.max`).
    case noIDLeft
    /// The title has more than `maximum` characters (after trimming).
    case titleTooLong(length: Int, maximum: Int)
    /// A character of the title is made of more than `maximum` Unicode scalars (`scalars`): a
    /// letter under a pile of combining marks, which a table shows as one character.
    case characterTooComplex(scalars: Int, maximum: Int)
    /// The title contains a control character (`found` names it: "a line break", "U+001B").
    case controlCharacterInTitle(found: String)
    /// The store refused to save. The change was made in memory (the queue shows it) but not
    /// stored: the store keeps its previous content, never a half-written one.
    case store(StoreError)

    /// The message shown to people.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .unknownItem(let id): "no item \(id)"
        case .notQueued(let id): "item \(id) is not in today's queue"
        case .badPosition(let position, let count):
            count == 0
                ? "the queue is empty: there is no position \(position)"
                : "position \(position) is not in 1...\(count)"
        case .emptyTitle: "a title cannot be empty"
        case .noIDLeft: "no item can be added: every id has been given (nextID is \(Int.max))"
        case .titleTooLong(let length, let maximum):
            "a title can have at most \(maximum) characters; this one has \(length)"
        case .characterTooComplex(let scalars, let maximum):
            "a character of a title can be made of at most \(maximum) Unicode scalars (a letter and its marks); "
                + "one of this title's is made of \(scalars)"
        case .controlCharacterInTitle(let found):
            "a title cannot contain control characters (found \(found)); give one line of plain text"
        case .store(let error): error.description
        }
    }
}
