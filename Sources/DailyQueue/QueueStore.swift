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

/// Why a store could not load or save. Nothing was lost or overwritten.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file exists but cannot be read.
    case unreadable(path: String, reason: String)
    /// The file is not a valid queue file (it is left untouched).
    case corrupt(path: String, reason: String)
    /// The file was written by a newer version of the app.
    case newerFormat(path: String, found: Int, supported: Int)
    /// The file could not be written (the old file, if any, is intact).
    case unwritable(path: String, reason: String)

    /// The message shown to people.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the store \(path): \(reason)"
        case .corrupt(let path, let reason): "the store \(path) is corrupt (\(reason)); it was left untouched"
        case .newerFormat(let path, let found, let supported):
            "the store \(path) has format version \(found), but this daily-queue supports up to \(supported); "
                + "use a newer daily-queue"
        case .unwritable(let path, let reason): "cannot write the store \(path): \(reason)"
        }
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

/// A store in a JSON file. Writes go to a temporary file in the same folder, which is then
/// renamed over the store file: a crash mid-write leaves the old file intact. A file it cannot
/// understand is reported and never overwritten.
public final class JSONFileQueueStore: QueueStore {
    /// The store file.
    public let url: URL
    /// Runs after the temporary file is written and before the rename; tests use it to simulate
    /// a crash at the worst moment.
    let beforeRename: (@Sendable () throws -> Void)?

    /// A store in the file at `url` (created on the first save).
    ///
    /// Thread safety: the store is `Sendable`. Callbacks: none.
    /// - Complexity: O(1); nothing is read until `load()`.
    public convenience init(url: URL) {
        self.init(url: url, beforeRename: nil)
    }

    package init(url: URL, beforeRename: (@Sendable () throws -> Void)?) {
        self.url = url
        self.beforeRename = beforeRename
    }

    /// Reads the file; `nil` when it does not exist.
    ///
    /// Thread safety: safe from any thread (reads never see a half-written file).
    /// Callbacks: none.
    /// - Throws: `.unreadable`, `.corrupt` or `.newerFormat`; the file is never changed.
    /// - Complexity: O(file size).
    public func load() throws(StoreError) -> StoredQueue? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .unreadable(path: path, reason: Self.reason(error))
        }
        struct Header: Decodable { let formatVersion: Int }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: "not a daily-queue file")
        }
        guard header.formatVersion <= StoredQueue.currentFormatVersion else {
            throw .newerFormat(
                path: path, found: header.formatVersion, supported: StoredQueue.currentFormatVersion)
        }
        do {
            return try JSONDecoder().decode(StoredQueue.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: Self.reason(error))
        }
    }

    /// Writes a temporary file next to the store, then renames it over the store (atomic).
    ///
    /// Thread safety: safe from any thread; the last rename wins. Callbacks: none.
    /// - Throws: `.unwritable`; the old file is intact.
    /// - Complexity: O(size of the queue).
    public func save(_ queue: StoredQueue) throws(StoreError) {
        let path = url.path
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            let data = try encoder.encode(queue)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: temporary)
            try beforeRename?()
            guard rename(temporary.path, path) == 0 else {
                throw CocoaError(
                    .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))]
                )
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .unwritable(path: path, reason: Self.reason(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        if let decoding = error as? DecodingError {
            switch decoding {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
                .valueNotFound(_, let context):
                let where_ = context.codingPath.map(\.stringValue).joined(separator: ".")
                return where_.isEmpty ? context.debugDescription : "\(where_): \(context.debugDescription)"
            @unknown default: return "\(decoding)"
            }
        }
        return (error as NSError).localizedDescription
    }
}
