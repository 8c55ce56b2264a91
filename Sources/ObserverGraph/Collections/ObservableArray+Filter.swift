// What `filter` remembers between upstream changes: which upstream positions are included, with
// a Fenwick tree over them, so that an upstream index becomes a filtered index in O(log n).
// Inlinable, like `filter`, so that it is specialized for the element type.

/// A Fenwick (binary indexed) tree of 0/1 counts: prefix counts, point changes and appends in
/// O(log n), a rebuild in O(n).
@usableFromInline
struct _FenwickCounts: Sendable {
    @usableFromInline var tree: [Int] = [0]  // 1-based

    @inlinable init() {}

    @inlinable var count: Int { tree.count - 1 }

    /// How many of the first `length` positions are set.
    @inlinable
    func prefix(_ length: Int) -> Int {
        var sum = 0
        var i = length
        while i > 0 {
            sum += tree[i]
            i &= i - 1
        }
        return sum
    }

    @inlinable
    mutating func add(_ delta: Int, at position: Int) {
        var i = position + 1
        while i < tree.count {
            tree[i] += delta
            i += i & -i
        }
    }

    @inlinable
    mutating func append(_ value: Int) {
        let i = tree.count
        let low = i & -i
        tree.append(value + prefix(i - 1) - prefix(i - low))
    }

    @inlinable
    mutating func removeLast(_ k: Int) {
        tree.removeLast(k)
    }

    @inlinable
    mutating func rebuild(_ flags: [Bool]) {
        tree = [0] + flags.map { $0 ? 1 : 0 }
        for i in 1..<max(1, tree.count) {
            let parent = i + (i & -i)
            if parent < tree.count { tree[parent] += tree[i] }
        }
    }
}

/// Translates upstream changes into the changes of the filtered array.
@usableFromInline
final class _FilterState<Element: Sendable>: Sendable {
    @usableFromInline let isIncluded: @Sendable (Element) -> Bool
    @usableFromInline let state = GraphLock<(flags: [Bool], ranks: _FenwickCounts)>(([], _FenwickCounts()))

    @inlinable
    init(_ isIncluded: @escaping @Sendable (Element) -> Bool) {
        self.isIncluded = isIncluded
    }

    @usableFromInline
    struct Translated {
        @usableFromInline var changeset: ArrayChangeset
        @usableFromInline var newCount: Int
        @usableFromInline var inserted: [Element]
        @usableFromInline var updated: [Element]

        @inlinable
        init(changeset: ArrayChangeset, newCount: Int, inserted: [Element], updated: [Element]) {
            self.changeset = changeset
            self.newCount = newCount
            self.inserted = inserted
            self.updated = updated
        }
    }

    /// Turns an upstream change into the change of the filtered array. Upstream changes arrive
    /// one at a time (a source delivers serially), so the state is read and written in order;
    /// `isIncluded` runs with no lock held.
    @inlinable
    func translate(_ change: ArrayChange<Element>) -> Translated {
        let upstream = change.changeset
        let newCount = change.array.count
        let oldCount = newCount - upstream._growth
        var (flags, ranks) = state.withLock { state in
            defer { state = ([], _FenwickCounts()) }  // let `flags` and `ranks` be uniquely referenced
            return state
        }
        guard flags.count == oldCount else {  // out of step: start again from the whole array
            return reset(change, filteredCount: ranks.prefix(ranks.count))
        }
        if case .inserts(let indices) = upstream._storage, indices.first == oldCount {
            return appended(change.array, at: indices, flags: &flags, ranks: &ranks)
        }
        if case .updates(let indices) = upstream._storage, indices.count == 1 {
            return updated(change.array, at: indices[0], flags: &flags, ranks: &ranks)
        }
        let updateTargets = upstream.newIndicesOfUpdates()
        let insertedFlags = upstream.inserts.map { isIncluded(change.array[$0]) }
        let updatedFlags = updateTargets.map { isIncluded(change.array[$0]) }
        var deletes: [Int] = []
        var inserts: [Int] = []
        var updates: [Int] = []
        var moves: [ArrayChangeset.Move] = []
        var inserted: [Element] = []
        var updated: [Element] = []
        // Old coordinates first.
        for index in upstream.deletes where flags[index] { deletes.append(ranks.prefix(index)) }
        var entering: [Int] = []  // new upstream indices of updated elements that enter
        for (i, index) in upstream.updates.enumerated() {
            switch (flags[index], updatedFlags[i]) {
            case (true, true):
                updates.append(ranks.prefix(index))
                updated.append(change.array[updateTargets[i]])
            case (true, false): deletes.append(ranks.prefix(index))
            case (false, true): entering.append(updateTargets[i])
            case (false, false): break
            }
        }
        let movedFrom = upstream.moves.map { flags[$0.from] ? ranks.prefix($0.from) : -1 }
        // The flags and ranks of the new upstream array.
        let tailOnly =
            upstream.moves.isEmpty
            && (upstream.inserts.first ?? oldCount) >= oldCount - upstream.deletes.count
            && (upstream.deletes.first ?? oldCount) >= oldCount - upstream.deletes.count
        upstream.applyInPlace(to: &flags, inserted: insertedFlags, updated: updatedFlags)
        if tailOnly {
            ranks.removeLast(upstream.deletes.count)
            for (i, index) in upstream.updates.enumerated() where index < ranks.count {
                let now = updatedFlags[i] ? 1 : 0
                let was = ranks.prefix(index + 1) - ranks.prefix(index)
                if now != was { ranks.add(now - was, at: index) }
            }
            while ranks.count < flags.count { ranks.append(flags[ranks.count] ? 1 : 0) }
        } else {
            ranks.rebuild(flags)
        }
        // New coordinates.
        for (i, index) in upstream.inserts.enumerated() where insertedFlags[i] {
            inserts.append(ranks.prefix(index))
            inserted.append(change.array[index])
        }
        for index in entering {
            inserts.append(ranks.prefix(index))
            inserted.append(change.array[index])
        }
        for (move, from) in zip(upstream.moves, movedFrom) where from >= 0 {
            moves.append(ArrayChangeset.Move(from: from, to: ranks.prefix(move.to)))
        }
        let filteredNewCount = ranks.prefix(newCount)
        state.withLock { $0 = (flags, ranks) }
        return Translated(
            changeset: ArrayChangeset(deletes: deletes, inserts: inserts, updates: updates, moves: moves),
            newCount: filteredNewCount, inserted: sortedByIndex(inserts, inserted), updated: updated)
    }

    /// The change of the filtered array when upstream appended the elements at `indices` (the
    /// last ones of `array`): the included ones are appended, in order. O(k log n).
    @inlinable
    func appended(
        _ array: [Element], at indices: [Int], flags: inout [Bool], ranks: inout _FenwickCounts
    ) -> Translated {
        var filteredCount = ranks.prefix(ranks.count)
        var inserts: [Int] = []
        var inserted: [Element] = []
        for index in indices {
            let element = array[index]
            let included = isIncluded(element)
            flags.append(included)
            ranks.append(included ? 1 : 0)
            if included {
                inserts.append(filteredCount)
                inserted.append(element)
                filteredCount += 1
            }
        }
        state.withLock { $0 = (flags, ranks) }
        return Translated(
            changeset: ArrayChangeset(_storage: inserts.isEmpty ? .empty : .inserts(inserts)),
            newCount: filteredCount, inserted: inserted, updated: [])
    }

    /// The change of the filtered array when upstream replaced the element at `index` (what
    /// `set(_:at:)` makes): an update if it stays in, a delete if it leaves, an insert if it
    /// enters, nothing if it stays out. O(log n).
    @inlinable
    func updated(
        _ array: [Element], at index: Int, flags: inout [Bool], ranks: inout _FenwickCounts
    ) -> Translated {
        let element = array[index]
        let included = isIncluded(element)
        let rank = ranks.prefix(index)
        var filteredCount = ranks.prefix(ranks.count)
        var storage = ArrayChangeset._Storage.empty
        var inserted: [Element] = []
        var updated: [Element] = []
        switch (flags[index], included) {
        case (true, true):
            storage = .updates([rank])
            updated = [element]
        case (true, false):
            storage = .deletes([rank])
            ranks.add(-1, at: index)
            filteredCount -= 1
        case (false, true):
            storage = .inserts([rank])
            inserted = [element]
            ranks.add(1, at: index)
            filteredCount += 1
        case (false, false):
            break
        }
        flags[index] = included
        state.withLock { $0 = (flags, ranks) }
        return Translated(
            changeset: ArrayChangeset(_storage: storage), newCount: filteredCount, inserted: inserted,
            updated: updated)
    }

    /// The values of `inserts` in ascending index order (the changeset sorts its lists).
    @inlinable
    func sortedByIndex(_ indices: [Int], _ values: [Element]) -> [Element] {
        var sorted = true
        for i in indices.indices.dropFirst() where indices[i - 1] > indices[i] { sorted = false }
        if sorted { return values }
        return zip(indices, values).sorted { $0.0 < $1.0 }.map(\.1)
    }

    @inlinable
    func reset(_ change: ArrayChange<Element>, filteredCount: Int) -> Translated {
        let flags = change.array.map(isIncluded)
        var ranks = _FenwickCounts()
        ranks.rebuild(flags)
        state.withLock { $0 = (flags, ranks) }
        let included = zip(change.array, flags).filter(\.1).map(\.0)
        return Translated(
            changeset: .reload(oldCount: filteredCount, newCount: included.count), newCount: included.count,
            inserted: included, updated: [])
    }
}
