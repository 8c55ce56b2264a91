// Applying a changeset to an array in place, at a cost that depends on the size of the change,
// not of the array: what derived arrays (`map`, `filter`, `bind(to:)`) do for each upstream change.
// Inlinable, like the derived arrays that use it, so that it is specialized for the element type
// where the arrays are: unspecialized, it looked up generic metadata for each change.

extension ArrayChangeset {
    /// The new index of each updated element (`updates` are old indices), in the order of
    /// `updates`. The changeset must be valid.
    ///
    /// - Complexity: O(k), k = number of entries (the lists are sorted).
    @inlinable
    func newIndicesOfUpdates() -> [Int] {
        guard !updates.isEmpty else { return [] }
        let removed = removedOldIndices()
        let placed = placedNewIndices()
        var result: [Int] = []
        result.reserveCapacity(updates.count)
        var removedBefore = 0
        var placedBefore = 0
        for old in updates {
            while removedBefore < removed.count && removed[removedBefore] < old { removedBefore += 1 }
            let rank = old - removedBefore  // among the survivors
            while placedBefore < placed.count && placed[placedBefore] <= rank + placedBefore {
                placedBefore += 1
            }
            result.append(rank + placedBefore)
        }
        return result
    }

    /// `transform` of the new value of each inserted element and of each updated one, in the
    /// order of `inserts` and of `updates`, read from `array`, the array after the change:
    /// what `applyInPlace` takes. A changeset of inserts only or of updates only is read
    /// straight from its one list.
    ///
    /// - Complexity: O(k) plus k calls of `transform`, k = number of entries.
    @inlinable
    func _newValues<Source, Mapped>(in array: [Source], _ transform: (Source) -> Mapped)
        -> (inserted: [Mapped], updated: [Mapped])
    {
        switch _storage {
        case .empty, .deletes, .moves: ([], [])
        case .inserts(let indices): (indices.map { transform(array[$0]) }, [])
        case .updates(let indices): ([], indices.map { transform(array[$0]) })  // nothing moved
        case .mixed(let lists):
            (lists.inserts.map { transform(array[$0]) }, newIndicesOfUpdates().map { transform(array[$0]) })
        }
    }

    /// Old indices that leave their place (deleted or moved), ascending.
    @inlinable
    func removedOldIndices() -> [Int] {
        moves.isEmpty ? deletes : (deletes + moves.map(\.from)).sorted()
    }

    /// New indices filled by an inserted or moved element, ascending.
    @inlinable
    func placedNewIndices() -> [Int] {
        moves.isEmpty ? inserts : (inserts + moves.map(\.to)).sorted()
    }

    /// Applies this changeset to `array` in place: `inserted[i]` is the value of `inserts[i]`,
    /// `updated[i]` the new value of `updates[i]`; moved elements keep their values. The
    /// changeset must be valid for `array.count`.
    ///
    /// - Complexity: O(k log k) plus, when the change is small or at the end (appends, updates,
    ///   removals at the end), shifting only the elements after each change; otherwise one
    ///   O(n + k) pass.
    @inlinable
    func applyInPlace<Element>(to array: inout [Element], inserted: [Element], updated: [Element]) {
        if _applySingleList(to: &array, inserted: inserted, updated: updated) { return }
        for (old, value) in zip(updates, updated) { array[old] = value }
        guard !(deletes.isEmpty && inserts.isEmpty && moves.isEmpty) else { return }
        let removed = removedOldIndices()
        let placedCount = inserts.count + moves.count
        let firstTouched = min(removed.first ?? array.count, (placedNewIndices().first ?? array.count))
        let tail = max(0, array.count - firstTouched)
        // Shifting element by element costs about (removed + placed) × tail; one pass costs n.
        if (removed.count + placedCount).multipliedReportingOverflow(by: tail).partialValue <= 2 * array.count
            || removed.count + placedCount <= 2
        {
            applyStepwise(to: &array, removed: removed, inserted: inserted)
        } else {
            applyInOnePass(to: &array, removed: removed, inserted: inserted)
        }
    }

    /// The changes a single mutation makes, applied straight from the one list the changeset
    /// holds (no list is copied out of it): appends, removals at the end and updates. `false`
    /// for any other change, which `applyInPlace` then applies in general.
    ///
    /// - Complexity: O(k), k = number of entries.
    @inlinable
    func _applySingleList<Element>(to array: inout [Element], inserted: [Element], updated: [Element]) -> Bool
    {
        switch _storage {
        case .empty:
            return true
        case .inserts(let indices):
            // Ascending new indices from `count` to `count + k - 1`: exactly the appended ones.
            guard indices.first == array.count, indices.last == array.count + indices.count - 1 else {
                return false
            }
            array.append(contentsOf: inserted)
            return true
        case .deletes(let indices):
            // Ascending old indices from `count - k` to `count - 1`: exactly the last k.
            guard indices.first == array.count - indices.count, indices.last == array.count - 1 else {
                return false
            }
            array.removeLast(indices.count)
            return true
        case .updates(let indices):
            for (index, value) in zip(indices, updated) { array[index] = value }
            return true
        case .moves, .mixed:
            return false
        }
    }

    /// The number of inserts minus the number of deletes: how much the count grows.
    ///
    /// - Complexity: O(1).
    @inlinable
    var _growth: Int {
        switch _storage {
        case .empty, .updates, .moves: 0
        case .inserts(let indices): indices.count
        case .deletes(let indices): -indices.count
        case .mixed(let lists): lists.inserts.count - lists.deletes.count
        }
    }

    @inlinable
    func applyStepwise<Element>(to array: inout [Element], removed: [Int], inserted: [Element]) {
        var moved: [Int: Element] = [:]
        for move in moves { moved[move.from] = array[move.from] }
        if !removed.isEmpty && removed.last! - removed.first! + 1 == removed.count {
            array.removeSubrange(removed.first!...removed.last!)
        } else {
            for index in removed.reversed() { array.remove(at: index) }
        }
        var nextInsert = 0
        var nextMove = 0
        while nextInsert < inserts.count || nextMove < moves.count {
            let takeInsert =
                nextMove == moves.count
                || (nextInsert < inserts.count && inserts[nextInsert] < moves[nextMove].to)
            if takeInsert {
                place(inserted[nextInsert], at: inserts[nextInsert], in: &array)
                nextInsert += 1
            } else {
                if let value = moved[moves[nextMove].from] {
                    place(value, at: moves[nextMove].to, in: &array)
                }
                nextMove += 1
            }
        }
    }

    @inlinable
    func place<Element>(_ value: Element, at index: Int, in array: inout [Element]) {
        if index == array.count { array.append(value) } else { array.insert(value, at: index) }
    }

    @inlinable
    func applyInOnePass<Element>(to array: inout [Element], removed: [Int], inserted: [Element]) {
        let newCount = array.count - deletes.count + inserts.count
        var result: [Element] = []
        result.reserveCapacity(newCount)
        var nextRemoved = 0
        var survivor = 0
        var nextInsert = 0
        var nextMove = 0
        for position in 0..<newCount {
            if nextInsert < inserts.count && inserts[nextInsert] == position {
                result.append(inserted[nextInsert])
                nextInsert += 1
            } else if nextMove < moves.count && moves[nextMove].to == position {
                result.append(array[moves[nextMove].from])
                nextMove += 1
            } else {
                while nextRemoved < removed.count && removed[nextRemoved] == survivor {
                    nextRemoved += 1
                    survivor += 1
                }
                result.append(array[survivor])
                survivor += 1
            }
        }
        array = result
    }
}
