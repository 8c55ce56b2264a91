// Composing the changesets of several changes into one: what a coalesced observation of an array
// (`ReadOnlyObservableArray.observeCoalesced(isolation:_:)`) delivers when changes came faster
// than its actor took them. A sectioned array composes its list of sections and each section's
// items with it (`_ComposedSectionedChanges`).

/// What a coalesced observation of an array composes (see `_Coalescer`).
@usableFromInline
struct _ArrayComposer<Element: Sendable>: _ChangeComposer {
    @usableFromInline var changes: _ComposedArrayChanges

    @inlinable
    init(from change: ArrayChange<Element>) {
        changes = _ComposedArrayChanges(count: change.array.count)
    }

    @inlinable
    init() {
        changes = _ComposedArrayChanges(count: 0)
    }

    @inlinable
    var isEmpty: Bool { changes.isEmpty }

    @inlinable
    mutating func add(_ change: ArrayChange<Element>) -> ArrayChange<Element>? {
        changes.add(change.changeset)
        return nil
    }

    @inlinable
    mutating func take(with current: ArrayChange<Element>) -> ArrayChange<Element> {
        ArrayChange(array: current.array, changeset: changes.take())
    }

    @inlinable
    static func isUnchanged(_ change: ArrayChange<Element>) -> Bool {
        change.changeset.isEmpty
    }
}

/// The changes an observer has not received yet, composed into one changeset from the array it
/// saw last (`baseCount` elements) to the array after them (`count` elements). A value; no
/// lock, no user code: the coalescing observation holds it under its own lock.
///
/// Appends alone compose into one range of inserts at O(1) each. Any other change after a first
/// one materializes, once, where each element now comes from (an old index, or -1 for an
/// inserted element) and which old elements changed; the later changes then update that map in
/// place, each at about the cost the change had on the array itself.
@usableFromInline
struct _ComposedArrayChanges {
    /// The number of elements the observer saw last.
    private(set) var baseCount: Int
    /// The number of elements after the pending changes.
    private(set) var count: Int
    private var form = Form.none

    private enum Form {
        /// No pending change.
        case none
        /// One change, delivered as it came.
        case single(ArrayChangeset)
        /// Only appends: `baseCount..<count` inserted.
        case appends
        /// For each element now, the old index it came from (-1: inserted since), and for each old
        /// index, whether its element changed.
        case origins([Int], updated: [Bool])
    }

    /// No pending change, from an array of `count` elements.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    init(count: Int) {
        baseCount = count
        self.count = count
    }

    /// Whether no change is pending.
    @usableFromInline
    var isEmpty: Bool {
        if case .none = form { true } else { false }
    }

    /// Adds `changeset`, a valid change of the array after the pending ones (`count` elements).
    ///
    /// - Complexity: O(1) for an append after appends, or for a first change; O(baseCount +
    ///   count) once, for the second change that is not an append; then about the cost of
    ///   applying `changeset` in place to an array of `count` elements: O(k) for appends,
    ///   updates and removals at the end, O(n + k) for other changes, k = its entries.
    @usableFromInline
    mutating func add(_ changeset: ArrayChangeset) {
        if changeset.isEmpty { return }
        let appended = Self.isAppend(changeset, to: count)
        let newCount = count + changeset._growth
        defer { count = newCount }
        switch form {
        case .none:
            form = appended ? .appends : .single(changeset)
        case .appends where appended:
            break
        case .appends:
            var origins = Array(0..<baseCount)
            origins.append(contentsOf: repeatElement(-1, count: count - baseCount))
            var updated = [Bool](repeating: false, count: baseCount)
            Self.apply(changeset, to: &origins, updated: &updated)
            form = .origins(origins, updated: updated)
        case .single(let first):
            let (optional, marks) = first.origins(oldCount: baseCount, newCount: count)
            var origins = optional.map { $0 ?? -1 }
            var updated = marks
            Self.apply(changeset, to: &origins, updated: &updated)
            form = .origins(origins, updated: updated)
        case .origins(var origins, var updated):
            form = .none  // the two arrays are now uniquely referenced: changed in place
            Self.apply(changeset, to: &origins, updated: &updated)
            form = .origins(origins, updated: updated)
        }
    }

    /// The composed changeset, from the array of `baseCount` elements to the one of `count`;
    /// afterwards nothing is pending and `baseCount` is `count`.
    ///
    /// - Complexity: O(1) for a single change, O(k) for k appended elements; otherwise
    ///   O(n + K log K), n = `baseCount + count`, K = elements out of their old order.
    @usableFromInline
    mutating func take() -> ArrayChangeset {
        defer {
            form = .none
            baseCount = count
        }
        switch form {
        case .none:
            return ArrayChangeset()
        case .single(let changeset):
            return changeset
        case .appends:
            return ArrayChangeset(_storage: .inserts(Array(baseCount..<count)))
        case .origins(let origins, let updated):
            return ArrayChangeset.fromOrigins(origins, oldCount: baseCount, updated: updated)
        }
    }

    /// The index, in the array the observer saw last, of the element now at `position`; `nil`
    /// for an element inserted since. `position` must be in `0..<count`.
    ///
    /// - Complexity: O(1), except after exactly one change that is not an append: O(baseCount +
    ///   count) once (the map of origins is made then, as a second change would make it).
    @usableFromInline
    mutating func origin(at position: Int) -> Int? {
        switch form {
        case .none:
            return position
        case .appends:
            return position < baseCount ? position : nil
        case .single(let first):
            let (optional, marks) = first.origins(oldCount: baseCount, newCount: count)
            let origins = optional.map { $0 ?? -1 }
            form = .origins(origins, updated: marks)
            return origins[position] >= 0 ? origins[position] : nil
        case .origins(let origins, _):
            return origins[position] >= 0 ? origins[position] : nil
        }
    }

    /// For each index of the array the observer saw last, the position of its element after
    /// the pending changes (-1: removed); `nil` when every element that is still there kept its
    /// index (no pending change, or appends alone). Takes nothing.
    ///
    /// - Complexity: O(1) when `nil`; otherwise O(baseCount + count).
    @usableFromInline
    func positions() -> [Int]? {
        let origins: [Int]
        switch form {
        case .none, .appends:
            return nil
        case .single(let first):
            origins = first.origins(oldCount: baseCount, newCount: count).origins.map { $0 ?? -1 }
        case .origins(let map, _):
            origins = map
        }
        var positions = [Int](repeating: -1, count: baseCount)
        for (position, origin) in origins.enumerated() where origin >= 0 { positions[origin] = position }
        return positions
    }

    /// Whether `changeset` only appends to an array of `count` elements.
    private static func isAppend(_ changeset: ArrayChangeset, to count: Int) -> Bool {
        // Inserts are ascending and distinct: from `count` to `count + k - 1` is exactly a run.
        guard case .inserts(let indices) = changeset._storage else { return false }
        return indices.first == count && indices.last == count + indices.count - 1
    }

    /// Applies `changeset` to `origins`: an updated element keeps its origin and marks it
    /// changed, an inserted one comes from nowhere (-1), a moved one keeps its origin.
    private static func apply(_ changeset: ArrayChangeset, to origins: inout [Int], updated: inout [Bool]) {
        let updates = changeset.updates
        for index in updates where origins[index] >= 0 { updated[origins[index]] = true }
        changeset.applyInPlace(
            to: &origins, inserted: [Int](repeating: -1, count: changeset.inserts.count),
            updated: updates.map { origins[$0] })
    }
}
