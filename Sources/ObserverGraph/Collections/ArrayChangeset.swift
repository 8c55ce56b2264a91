/// Exactly how an array changed, with the index rules of table and collection view batch
/// updates:
///
/// - `deletes`: indices in the OLD array of the elements that were removed;
/// - `inserts`: indices in the NEW array of the elements that were added;
/// - `updates`: indices in the OLD array of elements that stayed but got a new value;
/// - `moves`: elements that stayed but changed place, from their OLD index to their NEW index.
///
/// Every other element stays, and the survivors keep their relative order. So applying the
/// changeset to the old array (`apply(to:newElements:)`) reproduces the new array exactly: it
/// takes values from the new array only at inserted and updated positions.
///
///     ["Steve", "Tim"] → append("John")  → inserts [2]
///     ["Steve", "Tim", "John"] → removeLast() → deletes [2]
///     ["Steve", "Tim"] → [1] = "Mark"     → updates [1]
///
/// An index appears at most once per list, a deleted index is never updated or moved, and an
/// updated element is never moved (a changed element that also moved is a delete plus an insert).
///
/// Thread safety: a value type; `Sendable`.
public struct ArrayChangeset: Hashable, Sendable, CustomStringConvertible {
    /// An element that moved from `from` (old index) to `to` (new index).
    public struct Move: Hashable, Sendable {
        /// The index in the old array.
        public var from: Int
        /// The index in the new array.
        public var to: Int

        /// A move from old index `from` to new index `to`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// The four lists, in one reference (see `_Storage`).
    @usableFromInline let _storage: _Storage

    /// Old indices of removed elements, ascending.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var deletes: [Int] {
        switch _storage {
        case .deletes(let list): list
        case .mixed(let lists): lists.deletes
        default: []
        }
    }

    /// New indices of added elements, ascending.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var inserts: [Int] {
        switch _storage {
        case .inserts(let list): list
        case .mixed(let lists): lists.inserts
        default: []
        }
    }

    /// Old indices of elements whose value changed in place, ascending.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var updates: [Int] {
        switch _storage {
        case .updates(let list): list
        case .mixed(let lists): lists.updates
        default: []
        }
    }

    /// Moved elements, by ascending new index.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var moves: [Move] {
        switch _storage {
        case .moves(let list): list
        case .mixed(let lists): lists.moves
        default: []
        }
    }

    /// A changeset with the given lists (sorted for you). Check it with `validate`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k log k), k = number of entries; O(k) when the lists are already sorted.
    public init(deletes: [Int] = [], inserts: [Int] = [], updates: [Int] = [], moves: [Move] = []) {
        _storage = Self._canonical(
            deletes: Self._ascending(deletes, by: <), inserts: Self._ascending(inserts, by: <),
            updates: Self._ascending(updates, by: <), moves: Self._ascending(moves) { $0.to < $1.to })
    }

    /// A changeset held in `storage`, which must be canonical (see `_Storage`).
    @inlinable
    init(_storage storage: _Storage) {
        _storage = storage
    }

    /// Everything removed and everything inserted: what a full reload looks like. A negative
    /// count counts as 0.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(oldCount + newCount).
    public static func reload(oldCount: Int, newCount: Int) -> ArrayChangeset {
        ArrayChangeset(deletes: Array(0..<max(0, oldCount)), inserts: Array(0..<max(0, newCount)))
    }

    /// Whether nothing changed.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var isEmpty: Bool {
        if case .empty = _storage { true } else { false }
    }

    /// A compact text form, e.g. `deletes [1], inserts [0, 3]`, or `no change`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k).
    public var description: String {
        var parts: [String] = []
        if !deletes.isEmpty { parts.append("deletes \(deletes)") }
        if !inserts.isEmpty { parts.append("inserts \(inserts)") }
        if !updates.isEmpty { parts.append("updates \(updates)") }
        if !moves.isEmpty {
            parts.append("moves " + moves.map { "\($0.from)→\($0.to)" }.joined(separator: ", "))
        }
        return parts.isEmpty ? "no change" : parts.joined(separator: ", ")
    }

    /// Checks that this changeset can turn an array of `oldCount` elements into one of
    /// `newCount`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ArrayChangesetError` naming the first rule broken.
    /// - Complexity: O(oldCount + newCount + k).
    public func validate(oldCount: Int, newCount: Int) throws(ArrayChangesetError) {
        guard oldCount >= 0 && newCount >= 0 else {
            throw ArrayChangesetError(problem: "counts cannot be negative (old \(oldCount), new \(newCount))")
        }
        var oldUse = [UInt8](repeating: 0, count: oldCount)  // 1 deleted, 2 moved, 3 updated
        func claim(_ index: Int, _ use: UInt8, _ what: String) throws(ArrayChangesetError) {
            guard index >= 0 && index < oldCount else {
                throw ArrayChangesetError(
                    problem: "\(what) index \(index) is outside the old array (0..<\(oldCount))")
            }
            guard oldUse[index] == 0 else {
                throw ArrayChangesetError(problem: "old index \(index) is used twice (\(what))")
            }
            oldUse[index] = use
        }
        for index in deletes { try claim(index, 1, "delete") }
        for move in moves { try claim(move.from, 2, "move source") }
        for index in updates { try claim(index, 3, "update") }
        var newUse = [Bool](repeating: false, count: newCount)
        func place(_ index: Int, _ what: String) throws(ArrayChangesetError) {
            guard index >= 0 && index < newCount else {
                throw ArrayChangesetError(
                    problem: "\(what) index \(index) is outside the new array (0..<\(newCount))")
            }
            guard !newUse[index] else {
                throw ArrayChangesetError(problem: "new index \(index) is used twice")
            }
            newUse[index] = true
        }
        for index in inserts { try place(index, "insert") }
        for move in moves { try place(move.to, "move target") }
        guard oldCount - deletes.count + inserts.count == newCount else {
            throw ArrayChangesetError(
                problem:
                    "\(oldCount) old - \(deletes.count) deleted + \(inserts.count) inserted is not \(newCount) new"
            )
        }
    }

    /// Applies this changeset to `old`: survivors and moved elements keep their old values,
    /// while inserted and updated positions take theirs from `newElements`. For a changeset that
    /// describes old → new, the result equals `newElements`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ArrayChangesetError` if the changeset does not fit the two counts.
    /// - Complexity: O(old.count + newElements.count).
    public func apply<Element>(to old: [Element], newElements: [Element]) throws(ArrayChangesetError)
        -> [Element]
    {
        try validate(oldCount: old.count, newCount: newElements.count)
        let (origins, updated) = origins(oldCount: old.count, newCount: newElements.count)
        var result: [Element] = []
        result.reserveCapacity(newElements.count)
        for (position, origin) in origins.enumerated() {
            if let origin, !updated[origin] {
                result.append(old[origin])
            } else {
                result.append(newElements[position])
            }
        }
        return result
    }

    /// For each new position, the old index its element came from (`nil`: inserted), and which
    /// old indices were updated. The inverse of `fromOrigins`. The changeset must be valid for
    /// the two counts.
    ///
    /// - Complexity: O(oldCount + newCount).
    func origins(oldCount: Int, newCount: Int) -> (origins: [Int?], updated: [Bool]) {
        var removed = [Bool](repeating: false, count: oldCount)
        for index in deletes { removed[index] = true }
        for move in moves { removed[move.from] = true }
        var updated = [Bool](repeating: false, count: oldCount)
        for index in updates { updated[index] = true }
        var origins = [Int?](repeating: nil, count: newCount)
        var fixed = [Bool](repeating: false, count: newCount)
        for index in inserts { fixed[index] = true }
        for move in moves {
            fixed[move.to] = true
            origins[move.to] = move.from
        }
        var survivor = 0
        for position in 0..<newCount where !fixed[position] {
            while removed[survivor] { survivor += 1 }
            origins[position] = survivor
            survivor += 1
        }
        return (origins, updated)
    }

    /// The changeset of an array whose element at new position `p` came from old index
    /// `origins[p]` (`nil` when inserted), where `updated` holds the old indices whose values
    /// changed. See the `[Int]` form.
    ///
    /// - Complexity: O(n log n), n = origins.count + oldCount.
    @usableFromInline
    static func fromOrigins(_ origins: [Int?], oldCount: Int, updated: Set<Int> = []) -> ArrayChangeset {
        var flags: [Bool]?
        if !updated.isEmpty {
            var marks = [Bool](repeating: false, count: oldCount)
            for index in updated { marks[index] = true }
            flags = marks
        }
        return fromOrigins(origins.map { $0 ?? -1 }, oldCount: oldCount, updated: flags)
    }

    /// The changeset of an array whose element at new position `p` came from old index
    /// `origins[p]` (-1 when inserted), where `updated[i]` says whether old index `i` changed
    /// its value. Survivors outside a longest increasing run of old indices become moves, so the
    /// number of moves is the smallest possible; a moved element that also changed becomes a
    /// delete plus an insert. Origins must be distinct old indices.
    ///
    /// - Complexity: O(n + K log K), n = origins.count + oldCount, K = survivors that are out of
    ///   order (a survivor in order costs O(1)).
    @usableFromInline
    static func fromOrigins(_ origins: [Int], oldCount: Int, updated: [Bool]?) -> ArrayChangeset {
        var present = [Bool](repeating: false, count: oldCount)
        var inserts: [Int] = []
        for (position, origin) in origins.enumerated() {
            if origin >= 0 { present[origin] = true } else { inserts.append(position) }
        }
        var deletes: [Int] = []
        for index in 0..<oldCount where !present[index] { deletes.append(index) }
        var inOrder = true
        var last = -1
        for origin in origins where origin >= 0 {
            if origin < last {
                inOrder = false
                break
            }
            last = origin
        }
        if inOrder {  // no moves: the common case of few changes, without the longest run
            var updates: [Int] = []
            if let updated {
                for origin in origins where origin >= 0 && updated[origin] { updates.append(origin) }
            }
            return ArrayChangeset(sortedDeletes: deletes, inserts: inserts, updates: updates, moves: [])
        }
        let kept = longestIncreasingRun(origins)
        var updates: [Int] = []
        var moves: [Move] = []
        var changedAndMoved = false
        for (position, origin) in origins.enumerated() where origin >= 0 {
            let changed = updated?[origin] ?? false
            if kept[position] {
                if changed { updates.append(origin) }
            } else if changed {
                deletes.append(origin)
                inserts.append(position)
                changedAndMoved = true
            } else {
                moves.append(Move(from: origin, to: position))
            }
        }
        if changedAndMoved {
            deletes.sort()
            inserts.sort()
        }
        return ArrayChangeset(sortedDeletes: deletes, inserts: inserts, updates: updates, moves: moves)
    }

    /// A changeset from lists already in order (deletes, inserts and updates ascending, moves by
    /// ascending new index).
    @usableFromInline
    init(sortedDeletes deletes: [Int], inserts: [Int], updates: [Int], moves: [Move]) {
        _storage = Self._canonical(deletes: deletes, inserts: inserts, updates: updates, moves: moves)
    }

    /// Marks a longest strictly increasing subsequence of the non-negative `values` (negative
    /// values are skipped, and never marked), by patience sorting. A value above every tail so
    /// far extends the longest run in O(1), so a nearly sorted input costs nearly O(n).
    ///
    /// - Complexity: O(n + K log n), K = values that do not extend the longest run.
    @usableFromInline
    static func longestIncreasingRun(_ values: [Int]) -> [Bool] {
        var tails: [Int] = []  // index into values of the smallest tail of each run length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, value) in values.enumerated() where value >= 0 {
            if let last = tails.last, values[last] < value {
                previous[i] = last
                tails.append(i)
                continue
            }
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var kept = [Bool](repeating: false, count: values.count)
        var i = tails.last ?? -1
        while i >= 0 {
            kept[i] = true
            i = previous[i]
        }
        return kept
    }
}

/// A changeset that does not fit the arrays it was applied to.
///
/// Thread safety: a value; `Sendable`.
public struct ArrayChangesetError: Error, Equatable, CustomStringConvertible {
    /// What rule the changeset broke.
    public let problem: String

    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String { "invalid changeset: \(problem)" }
}

/// An array and how it got there from the array the observer saw before.
///
/// Thread safety: a value type; `Sendable` when `Element` is.
public struct ArrayChange<Element> {
    /// The array after the change.
    public var array: [Element]
    /// How `array` differs from the previous array.
    public var changeset: ArrayChangeset

    /// A change to `array` described by `changeset`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(array: [Element], changeset: ArrayChangeset) {
        self.array = array
        self.changeset = changeset
    }
}

extension ArrayChange: Sendable where Element: Sendable {}
extension ArrayChange: Equatable where Element: Equatable {}
