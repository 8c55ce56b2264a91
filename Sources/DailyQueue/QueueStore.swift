import Foundation
import ObserverGraph

/// Everything a store keeps: the current day, the id counter and every item (queued or not).
public struct StoredQueue: Codable, Equatable, Sendable {
    /// The format this version of the app writes and reads.
    public static let currentFormatVersion = 1

    /// The format of this data.
    public var formatVersion: Int
    /// The queue manager's current day.
    public var currentDay: Weekday
    /// The next id to hand out.
    public var nextID: Int
    /// Every item, queued or not, in creation order.
    public var items: [StoredItem]

    /// An empty queue for `currentDay`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(currentDay: Weekday, nextID: Int = 1, items: [StoredItem] = []) {
        self.formatVersion = StoredQueue.currentFormatVersion
        self.currentDay = currentDay
        self.nextID = nextID
        self.items = items
    }
}

/// One stored item.
public struct StoredItem: Codable, Equatable, Sendable {
    /// The identity.
    public var id: ItemID
    /// The title.
    public var title: String
    /// Whether it is done.
    public var done: Bool
    /// Its day.
    public var dayOfTheWeek: Weekday
    /// The 1-based queue position, or `nil` when not queued.
    public var queuePosition: Int?

    /// A stored item with these values.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(id: ItemID, title: String, done: Bool, dayOfTheWeek: Weekday, queuePosition: Int?) {
        self.id = id
        self.title = title
        self.done = done
        self.dayOfTheWeek = dayOfTheWeek
        self.queuePosition = queuePosition
    }
}

/// Where the queue manager keeps its items: the source document's data-access provider.
public protocol QueueStore: Sendable {
    /// The stored queue, or `nil` when nothing was stored yet.
    func load() throws(StoreError) -> StoredQueue?
    /// Replaces what is stored with `queue`, atomically: after a crash, either the old or the
    /// new content is there, never a mix.
    func save(_ queue: StoredQueue) throws(StoreError)
}

/// A store in memory, for tests and the demo.
public final class InMemoryQueueStore: QueueStore {
    private let content: GraphLock<StoredQueue?>
    private let saves = GraphLock(0)

    /// A store holding `queue` (or nothing).
    ///
    /// Thread safety: the store is `Sendable`. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ queue: StoredQueue? = nil) {
        content = GraphLock(queue)
    }

    /// What was saved last, or `nil`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public func load() throws(StoreError) -> StoredQueue? { content.withLock { $0 } }

    /// Keeps `queue`; never fails.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public func save(_ queue: StoredQueue) throws(StoreError) {
        content.withLock { $0 = queue }
        saves.withLock { $0 += 1 }
    }

    /// How many times `save` was called.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var saveCount: Int { saves.withLock { $0 } }
}
