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
