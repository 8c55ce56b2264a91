// How an `ArrayChangeset` holds its lists, and equality over them.
extension ArrayChangeset {
    /// How a changeset holds its four lists. A changeset is copied into every delivery of an
    /// observable array, once per observer: as four arrays it would cost four reference-count
    /// operations per copy; stored here it costs one. A single mutation (`append`, `insert`,
    /// `remove`, `set`, `move`) fills one list only, so that list is held directly, with no
    /// extra allocation; a changeset that fills several lists keeps them in one immutable,
    /// shared box.
    ///
    /// The form is canonical: a list is held in its own case only when it is the only non-empty
    /// one, and `.empty` stands for no change. Equality and hashing still compare the four
    /// lists, so they never depend on the form.
    @usableFromInline
    enum _Storage: Sendable {
        /// No change.
        case empty
        /// Only deletes (non-empty, ascending).
        case deletes([Int])
        /// Only inserts (non-empty, ascending).
        case inserts([Int])
        /// Only updates (non-empty, ascending).
        case updates([Int])
        /// Only moves (non-empty, by ascending new index).
        case moves([Move])
        /// Two lists or more.
        case mixed(_Lists)
    }

    /// The lists of a changeset that fills more than one of them. Immutable, so copies share it.
    @usableFromInline
    final class _Lists: Sendable {
        @usableFromInline let deletes: [Int]
        @usableFromInline let inserts: [Int]
        @usableFromInline let updates: [Int]
        @usableFromInline let moves: [Move]

        @usableFromInline
        init(deletes: [Int], inserts: [Int], updates: [Int], moves: [Move]) {
            self.deletes = deletes
            self.inserts = inserts
            self.updates = updates
            self.moves = moves
        }
    }

    /// The canonical storage of lists already in order.
    ///
    /// - Complexity: O(1).
    @inlinable
    static func _canonical(deletes: [Int], inserts: [Int], updates: [Int], moves: [Move]) -> _Storage {
        switch (deletes.isEmpty, inserts.isEmpty, updates.isEmpty, moves.isEmpty) {
        case (true, true, true, true): .empty
        case (false, true, true, true): .deletes(deletes)
        case (true, false, true, true): .inserts(inserts)
        case (true, true, false, true): .updates(updates)
        case (true, true, true, false): .moves(moves)
        default: .mixed(_Lists(deletes: deletes, inserts: inserts, updates: updates, moves: moves))
        }
    }

    /// `list` in ascending order: itself (no copy) when it already is.
    ///
    /// - Complexity: O(k) when sorted, O(k log k) otherwise.
    static func _ascending<T>(_ list: [T], by less: (T, T) -> Bool) -> [T] {
        var previous: T?
        for item in list {
            if let previous, less(item, previous) { return list.sorted(by: less) }
            previous = item
        }
        return list
    }
}

extension ArrayChangeset {
    /// Two changesets are equal when their four lists are.
    ///
    /// Thread safety: values. Callbacks: none.
    /// - Complexity: O(k), k = number of entries.
    public static func == (lhs: ArrayChangeset, rhs: ArrayChangeset) -> Bool {
        switch (lhs._storage, rhs._storage) {
        case (.empty, .empty): true
        case (.deletes(let a), .deletes(let b)), (.inserts(let a), .inserts(let b)),
            (.updates(let a), .updates(let b)):
            a == b
        case (.moves(let a), .moves(let b)): a == b
        case (.mixed(let a), .mixed(let b)):
            a === b
                || (a.deletes == b.deletes && a.inserts == b.inserts && a.updates == b.updates
                    && a.moves == b.moves)
        default:  // the form is canonical: different forms hold different lists
            false
        }
    }

    /// Hashes the four lists, in the order deletes, inserts, updates, moves.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k), k = number of entries.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(deletes)
        hasher.combine(inserts)
        hasher.combine(updates)
        hasher.combine(moves)
    }
}
