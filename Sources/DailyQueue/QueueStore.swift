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

/// What a store held when a caller read or last wrote it: a save made with it succeeds only if
/// the store still holds exactly that (see `QueueStore.save(_:ifUnchangedSince:)`).
///
/// Thread safety: a value; `Sendable`. Callbacks: none.
public struct StoreRevision: Equatable, Sendable {
    /// What identifies the content: the file's bytes for a file, a generation for memory;
    /// `nil` when nothing was stored.
    package let content: [UInt8]?

    /// A revision identified by `content` (`nil`: nothing stored).
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    package init(_ content: [UInt8]?) {
        self.content = content
    }
}

/// Where the queue manager keeps its items: the source document's data-access provider.
///
/// A manager reads the store once, when it is made, and saves its whole queue after each change:
/// it saves with `save(_:ifUnchangedSince:)`, so that a store another process (or another
/// manager) saved meanwhile is refused with `StoreError.changedElsewhere`, never overwritten.
public protocol QueueStore: Sendable {
    /// The stored queue, or `nil` when nothing was stored yet.
    func load() throws(StoreError) -> StoredQueue?
    /// Replaces what is stored with `queue`, atomically: after a crash, either the old or the
    /// new content is there, never a mix. Unconditional: whatever was stored is replaced.
    func save(_ queue: StoredQueue) throws(StoreError)
    /// The stored queue (`nil`: nothing stored yet) and its revision, read at once.
    func loadWithRevision() throws(StoreError) -> (queue: StoredQueue?, revision: StoreRevision)
    /// Replaces what is stored with `queue`, as `save(_:)`, only if the store still holds what
    /// `revision` identifies, checked and replaced at once (no other save in between); returns
    /// the new revision.
    /// - Throws: `StoreError.changedElsewhere` (nothing is written) if the store changed since.
    func save(_ queue: StoredQueue, ifUnchangedSince revision: StoreRevision) throws(StoreError)
        -> StoreRevision
}

/// A store in memory, for tests and the demo.
public final class InMemoryQueueStore: QueueStore {
    /// The queue, and how many saves replaced it (its revision).
    private let content: GraphLock<(queue: StoredQueue?, generation: UInt64)>
    private let saves = GraphLock(0)

    /// A store holding `queue` (or nothing).
    ///
    /// Thread safety: the store is `Sendable`. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ queue: StoredQueue? = nil) {
        content = GraphLock((queue, 0))
    }

    /// What was saved last, or `nil`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public func load() throws(StoreError) -> StoredQueue? { content.withLock { $0.queue } }

    /// Keeps `queue`; never fails.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public func save(_ queue: StoredQueue) throws(StoreError) {
        content.withLock { $0 = (queue, $0.generation &+ 1) }
        saves.withLock { $0 += 1 }
    }

    /// What was saved last (or `nil`) and its revision, read in one critical section.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public func loadWithRevision() throws(StoreError) -> (queue: StoredQueue?, revision: StoreRevision) {
        content.withLock { ($0.queue, Self.revision($0)) }
    }

    /// Keeps `queue` if no save came after `revision`, checked and kept in one critical section.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Throws: `.changedElsewhere` if another save came first; nothing is kept.
    /// - Complexity: O(1).
    public func save(
        _ queue: StoredQueue, ifUnchangedSince revision: StoreRevision
    ) throws(StoreError) -> StoreRevision {
        let saved = content.withLock { content -> StoreRevision? in
            guard Self.revision(content) == revision else { return nil }
            content = (queue, content.generation &+ 1)
            return Self.revision(content)
        }
        guard let saved else { throw .changedElsewhere(path: "memory") }
        saves.withLock { $0 += 1 }
        return saved
    }

    private static func revision(_ content: (queue: StoredQueue?, generation: UInt64)) -> StoreRevision {
        content.queue == nil ? StoreRevision(nil) : StoreRevision(Array(String(content.generation).utf8))
    }

    /// How many times `save` was called.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var saveCount: Int { saves.withLock { $0 } }
}
