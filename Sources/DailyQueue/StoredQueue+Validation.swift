import Foundation

extension StoredQueue {
    /// Why this content cannot be a queue, or `nil` when it is consistent: ids positive and
    /// distinct, `nextID` positive and above every id, queue positions exactly 1...n.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(n log n), n = items.
    public var inconsistency: String? {
        // The next id is given to the next item (`Int.max`: none is left, and `add` refuses).
        guard nextID > 0 else { return "nextID \(nextID) is not positive" }
        var seen = Set<ItemID>()
        for item in items {
            guard item.id.rawValue > 0 else { return "id \(item.id.rawValue) is not positive" }
            guard seen.insert(item.id).inserted else { return "the id \(item.id) appears twice" }
        }
        if let largest = seen.max(), nextID <= largest.rawValue {
            return "nextID \(nextID) is not above the largest id \(largest)"
        }
        let positions = items.compactMap(\.queuePosition).sorted()
        guard positions.enumerated().allSatisfy({ $0.offset + 1 == $0.element }) else {
            let shown = positions.map(String.init).joined(separator: ", ")
            return "the queue positions are \(shown), not 1...\(positions.count)"
        }
        return nil
    }

    /// Decodes a store file's bytes, checking the format version, the consistency, and that
    /// the file holds no field a save would lose (`StrictQueue`), in one pass of the
    /// decoder; the format version is read on its own only when that pass fails, so that a
    /// newer format is reported as such, not as a decoding error.
    static func decode(_ data: Data, path: String) throws(StoreError) -> StoredQueue {
        let file: StrictQueue
        do {
            file = try JSONDecoder().decode(StrictQueue.self, from: data)
        } catch {
            struct Header: Decodable { let formatVersion: Int }
            guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
                throw .corrupt(path: path, reason: "not a daily-queue file")
            }
            try checkVersion(header.formatVersion, path: path)
            throw .corrupt(path: path, reason: reason(error))
        }
        try checkVersion(file.queue.formatVersion, path: path)
        if let problem = file.queue.inconsistency { throw .corrupt(path: path, reason: problem) }
        if let field = file.unknownField {
            throw .corrupt(path: path, reason: "unknown field \"\(field)\", which a save would lose")
        }
        return file.queue
    }

    /// Refuses a version this app did not write: below 1, or newer than it knows.
    private static func checkVersion(_ version: Int, path: String) throws(StoreError) {
        // Versions count from 1: a smaller one was never written by daily-queue.
        guard version >= 1 else {
            throw .corrupt(path: path, reason: "formatVersion \(version) is not a version")
        }
        guard version <= StoredQueue.currentFormatVersion else {
            throw .newerFormat(path: path, found: version, supported: StoredQueue.currentFormatVersion)
        }
    }

    private static func reason(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        switch decoding {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let location = context.codingPath.map(\.stringValue).joined(separator: ".")
            return location.isEmpty ? context.debugDescription : "\(location): \(context.debugDescription)"
        @unknown default: return "\(decoding)"
        }
    }
}

/// A store file's queue, decoded as `StoredQueue` decodes it, and the first field of the file
/// that it does not hold (`notes`, `items.3.tags`), or `nil`: a save writes only what it holds,
/// so a file with more (written by another program, or edited by hand) is refused rather than
/// rewritten without it.
private struct StrictQueue: Decodable {
    let queue: StoredQueue
    let unknownField: String?

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: FieldName.self)
        // In the order of `StoredQueue`'s fields, as its own decoding reads them.
        let formatVersion = try fields.decode(Int.self, forKey: FieldName.formatVersion)
        let currentDay = try fields.decode(Weekday.self, forKey: FieldName.currentDay)
        let nextID = try fields.decode(Int.self, forKey: FieldName.nextID)
        let items = try fields.decode([StrictItem].self, forKey: FieldName.items)
        var queue = StoredQueue(currentDay: currentDay, nextID: nextID, items: items.map(\.item))
        queue.formatVersion = formatVersion
        self.queue = queue
        unknownField =
            FieldName.firstUnknown(fields, FieldName.queue, present: 4, decoder)
            ?? items.lazy.compactMap(\.unknownField).first
    }
}

/// A stored item, decoded as `StoredItem` decodes it, and its first field that it does not hold
/// (see `StrictQueue`).
private struct StrictItem: Decodable {
    let item: StoredItem
    let unknownField: String?

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: FieldName.self)
        let position = try fields.decodeIfPresent(Int.self, forKey: FieldName.queuePosition)
        item = StoredItem(
            id: try fields.decode(ItemID.self, forKey: FieldName.id),
            title: try fields.decode(String.self, forKey: FieldName.title),
            done: try fields.decode(Bool.self, forKey: FieldName.done),
            dayOfTheWeek: try fields.decode(Weekday.self, forKey: FieldName.dayOfTheWeek),
            queuePosition: position)
        unknownField = FieldName.firstUnknown(
            fields, FieldName.item, present: position == nil ? 4 : 5, decoder)
    }
}

/// The name of a field of a store file, any name (so that unknown ones can be seen).
private struct FieldName: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    /// The name in quotes, as a decoding error's message shows it.
    var description: String { "\"\(stringValue)\"" }
    var debugDescription: String { description }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    static let formatVersion = FieldName(stringValue: "formatVersion")
    static let currentDay = FieldName(stringValue: "currentDay")
    static let nextID = FieldName(stringValue: "nextID")
    static let items = FieldName(stringValue: "items")
    static let id = FieldName(stringValue: "id")
    static let title = FieldName(stringValue: "title")
    static let done = FieldName(stringValue: "done")
    static let dayOfTheWeek = FieldName(stringValue: "dayOfTheWeek")
    static let queuePosition = FieldName(stringValue: "queuePosition")
    static let queue: Set = ["formatVersion", "currentDay", "nextID", "items"]
    static let item: Set = ["id", "title", "done", "dayOfTheWeek", "queuePosition"]

    /// The path of the first field of `fields` (in sorted order) not in `known`, when there are
    /// more than the `present` known ones (all of them were decoded), or `nil`.
    static func firstUnknown(
        _ fields: KeyedDecodingContainer<FieldName>, _ known: Set<String>, present: Int,
        _ decoder: any Decoder
    ) -> String? {
        let keys = fields.allKeys
        guard keys.count > present,
            let unknown = keys.lazy.map(\.stringValue).filter({ !known.contains($0) }).min()
        else { return nil }
        let place = decoder.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
        return (place + [unknown]).joined(separator: ".")
    }
}
