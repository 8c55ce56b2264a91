// Fuzz target: the changeset applier (`ArrayChangeset.validate` and `apply(to:newElements:)`).
//
// The bytes make two counts and four index lists, mostly in range (so that many changesets are
// valid) and sometimes out of it. An independent naive model decides whether the changeset fits
// the counts (each rule of `ArrayChangeset`'s documentation, checked on its own) and, if it
// does, what applying it gives. Property: `apply` and `validate` either succeed, and then the
// result is exactly the model's, or throw `ArrayChangesetError` exactly when the model refuses.
// Neither ever crashes.
import ObserverGraph

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChangesets(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var reader = Reader(Array(UnsafeBufferPointer(start: data, count: size)))
    let oldCount = reader.count()
    let newCount = reader.count()
    let deletes = reader.indices(around: oldCount)
    let inserts = reader.indices(around: newCount)
    let updates = reader.indices(around: oldCount)
    let moves = zip(reader.indices(around: oldCount), reader.indices(around: newCount)).map {
        ArrayChangeset.Move(from: $0, to: $1)
    }
    let changeset = ArrayChangeset(deletes: deletes, inserts: inserts, updates: updates, moves: moves)
    let old = Array(0..<max(0, oldCount))
    let new = Array(0..<max(0, newCount)).map { 1_000 + $0 }
    let expected = naiveApply(
        old: old, new: new, oldCount: oldCount, newCount: newCount,
        deletes: deletes, inserts: inserts, updates: updates, moves: moves)

    var validated = true
    do { try changeset.validate(oldCount: oldCount, newCount: newCount) } catch { validated = false }
    if oldCount >= 0 && newCount >= 0 {
        let applied: [Int]?
        do { applied = try changeset.apply(to: old, newElements: new) } catch { applied = nil }
        guard applied == expected else {
            fatalError(
                "apply: \(changeset) on \(oldCount) → \(newCount) gave \(String(describing: applied)), model says \(String(describing: expected))"
            )
        }
    }
    guard validated == (expected != nil) else {
        fatalError(
            "validate: \(changeset) on \(oldCount) → \(newCount) said \(validated), model says \(expected != nil)"
        )
    }
    return 0
}

/// The rules, one by one, and the result built position by position; `nil` when a rule fails.
func naiveApply(
    old: [Int], new: [Int], oldCount: Int, newCount: Int,
    deletes: [Int], inserts: [Int], updates: [Int], moves: [ArrayChangeset.Move]
) -> [Int]? {
    guard oldCount >= 0, newCount >= 0 else { return nil }
    let oldUses = deletes + updates + moves.map(\.from)
    let newUses = inserts + moves.map(\.to)
    guard oldUses.allSatisfy({ 0 <= $0 && $0 < oldCount }), Set(oldUses).count == oldUses.count else {
        return nil
    }
    guard newUses.allSatisfy({ 0 <= $0 && $0 < newCount }), Set(newUses).count == newUses.count else {
        return nil
    }
    guard oldCount - deletes.count + inserts.count == newCount else { return nil }
    // Survivors: old elements neither deleted nor moved, in their old order.
    let gone = Set(deletes).union(moves.map(\.from))
    var survivors = (0..<oldCount).filter { !gone.contains($0) }[...]
    var result: [Int] = []
    for position in 0..<newCount {
        if inserts.contains(position) {
            result.append(new[position])
        } else if let move = moves.first(where: { $0.to == position }) {
            result.append(old[move.from])
        } else {
            guard let origin = survivors.popFirst() else { return nil }
            result.append(updates.contains(origin) ? new[position] : old[origin])
        }
    }
    return survivors.isEmpty ? result : nil
}

/// Reads the fuzzer's bytes as choices; past the end every choice is 0.
struct Reader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A count from 0 to 23, and now and then a negative one. (Not a huge one: `validate` sizes
    /// its scratch arrays by the counts, so `Int.max` is out of its reach; see Fuzz/README.md.)
    mutating func count() -> Int {
        let byte = next()
        switch byte {
        case 250: return -1
        case 251: return Int.min
        default: return Int(byte % 24)
        }
    }

    /// Up to 7 indices, mostly within `0..<limit`, sometimes just outside it or extreme.
    mutating func indices(around limit: Int) -> [Int] {
        (0..<Int(next() % 8)).map { _ in
            let byte = next()
            switch byte {
            case 250: return -1
            case 251: return Int.min
            case 252: return Int.max
            case 253: return limit
            default: return Int(byte) % max(1, min(limit, 24))
            }
        }
    }
}
