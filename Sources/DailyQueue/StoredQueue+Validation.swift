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
    /// the file holds no field a save would lose.
    static func decode(_ data: Data, path: String) throws(StoreError) -> StoredQueue {
        struct Header: Decodable { let formatVersion: Int }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: "not a daily-queue file")
        }
        // Versions count from 1: a smaller one was never written by daily-queue.
        guard header.formatVersion >= 1 else {
            throw .corrupt(path: path, reason: "formatVersion \(header.formatVersion) is not a version")
        }
        guard header.formatVersion <= StoredQueue.currentFormatVersion else {
            throw .newerFormat(
                path: path, found: header.formatVersion, supported: StoredQueue.currentFormatVersion)
        }
        let queue: StoredQueue
        do {
            queue = try JSONDecoder().decode(StoredQueue.self, from: data)
        } catch {
            throw .corrupt(path: path, reason: reason(error))
        }
        if let problem = queue.inconsistency { throw .corrupt(path: path, reason: problem) }
        if let key = unknownKey(in: data) {
            throw .corrupt(path: path, reason: "unknown field \"\(key)\", which a save would lose")
        }
        return queue
    }

    /// The first field of the file that `StoredQueue` does not hold (`notes`, `items.3.tags`),
    /// or `nil`: a save writes only what it holds, so a file with more (written by another
    /// program, or edited by hand) is refused rather than rewritten without it.
    private static func unknownKey(in data: Data) -> String? {
        guard let file = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        let queueKeys: Set = ["formatVersion", "currentDay", "nextID", "items"]
        if let key = file.keys.sorted().first(where: { !queueKeys.contains($0) }) { return key }
        let itemKeys: Set = ["id", "title", "done", "dayOfTheWeek", "queuePosition"]
        for (index, item) in ((file["items"] as? [Any]) ?? []).enumerated() {
            guard let item = item as? [String: Any] else { continue }
            if let key = item.keys.sorted().first(where: { !itemKeys.contains($0) }) {
                return "items.\(index).\(key)"
            }
        }
        return nil
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
