import ObserverGraph

extension BatchUpdateValidator {
    /// Checks one batch of a sectioned view with `oldItemCounts[s]` items in section `s` before
    /// the batch and `newItemCounts[s]` after it: the section changes as for a single section;
    /// item deletes, reloads and move sources at valid paths before the batch, item inserts and
    /// move targets at valid paths after it, no path twice; no item change in a section that
    /// the same batch deletes, inserts, moves or reloads; no reload next to a move; and every
    /// section that stays has the number of items its changes give. A negative item count is a
    /// `countMismatch`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Throws: the first `BatchUpdateViolation` found (with `stage`).
    /// - Complexity: O(sections + items + k).
    public static func validate(
        _ update: SectionedBatchUpdate, oldItemCounts: [Int], newItemCounts: [Int], stage: Int = 0
    ) throws(BatchUpdateViolation) {
        func fail(_ rule: BatchUpdateViolation.Rule, _ detail: String) -> BatchUpdateViolation {
            BatchUpdateViolation(stage: stage, rule: rule, detail: detail)
        }
        if let section = oldItemCounts.firstIndex(where: { $0 < 0 }) {
            throw fail(
                .countMismatch,
                "a negative count: \(oldItemCounts[section]) items in section \(section) before")
        }
        if let section = newItemCounts.firstIndex(where: { $0 < 0 }) {
            throw fail(
                .countMismatch,
                "a negative count: \(newItemCounts[section]) items in section \(section) after")
        }
        let sections = update.sections
        try validate(sections, oldCount: oldItemCounts.count, newCount: newItemCounts.count, stage: stage)
        let reloads = !sections.updates.isEmpty || !update.itemReloads.isEmpty
        if reloads && (!sections.moves.isEmpty || !update.itemMoves.isEmpty) {
            throw fail(.reloadWithMove, "reloads and moves in one batch: \(update)")
        }
        let map = SectionMap(sections, oldCount: oldItemCounts.count, newCount: newItemCounts.count)
        var oldUsed = Set<ItemPath>()
        let olds =
            update.itemDeletes.map { ($0, "item delete") } + update.itemReloads.map { ($0, "item reload") }
            + update.itemMoves.map { ($0.from, "item move from") }
        for (path, what) in olds {
            guard oldItemCounts.indices.contains(path.section),
                (0..<oldItemCounts[path.section]).contains(path.item)
            else { throw fail(.indexOutOfRange, "\(what) \(path) before the batch") }
            guard map.newIndex[path.section] >= 0, !map.oldChanged[path.section] else {
                throw fail(.itemChangeInChangedSection, "\(what) \(path)")
            }
            guard oldUsed.insert(path).inserted else { throw fail(.oldIndexUsedTwice, "\(what) \(path)") }
        }
        var newUsed = Set<ItemPath>()
        let news =
            update.itemInserts.map { ($0, "item insert") } + update.itemMoves.map { ($0.to, "item move to") }
        for (path, what) in news {
            guard newItemCounts.indices.contains(path.section),
                (0..<newItemCounts[path.section]).contains(path.item)
            else { throw fail(.indexOutOfRange, "\(what) \(path) after the batch") }
            guard map.oldIndex[path.section] >= 0, !map.newChanged[path.section] else {
                throw fail(.itemChangeInChangedSection, "\(what) \(path)")
            }
            guard newUsed.insert(path).inserted else { throw fail(.newIndexUsedTwice, "\(what) \(path)") }
        }
        var delta = [Int](repeating: 0, count: newItemCounts.count)
        for path in update.itemDeletes { delta[map.newIndex[path.section]] -= 1 }
        for move in update.itemMoves {
            delta[map.newIndex[move.from.section]] -= 1
            delta[move.to.section] += 1
        }
        for path in update.itemInserts { delta[path.section] += 1 }
        for (new, old) in map.oldIndex.enumerated() where old >= 0 && !map.newChanged[new] {
            guard oldItemCounts[old] + delta[new] == newItemCounts[new] else {
                throw fail(
                    .countMismatch,
                    "section \(old)→\(new): \(oldItemCounts[old]) items \(delta[new] >= 0 ? "+" : "")\(delta[new]) "
                        + "!= \(newItemCounts[new])")
            }
        }
    }

    /// Checks staged sectioned changes from `old` to `new` as a view would apply them: every
    /// stage is a valid batch for what the view shows before it, the view then shows exactly
    /// the stage's sections (nothing stale), and the last stage shows `new`.
    ///
    /// Thread safety: pure. Callbacks: `==` of `Metadata` and `Item`.
    /// - Throws: the first `BatchUpdateViolation` found.
    /// - Complexity: O(stages × (sections + items)).
    public static func validate<Metadata: Equatable, Item: Equatable>(
        _ staged: StagedSectionedChangeset<Metadata, Item>, from old: [ArraySection<Metadata, Item>],
        to new: [ArraySection<Metadata, Item>]
    ) throws(BatchUpdateViolation) {
        var shown = old
        for (index, stage) in staged.stages.enumerated() {
            try validate(
                stage.update, oldItemCounts: shown.map(\.items.count),
                newItemCounts: stage.sections.map(\.items.count),
                stage: index)
            let after = display(stage.update, shown: shown, data: stage.sections)
            guard after == stage.sections else {
                let section = after.indices.first { after[$0] != stage.sections[$0] } ?? 0
                throw BatchUpdateViolation(
                    stage: index, rule: .staleContent, detail: "section \(section) shows old content")
            }
            shown = after
        }
        guard shown == new else {
            throw BatchUpdateViolation(
                stage: staged.stages.count, rule: .wrongResult,
                detail: "the stages end at \(shown.count) sections")
        }
    }

    /// What a view shows after a valid batch: what it showed, except for what it reads again
    /// from the data source (inserted and reloaded sections and items).
    private static func display<Metadata, Item>(
        _ update: SectionedBatchUpdate, shown: [ArraySection<Metadata, Item>],
        data: [ArraySection<Metadata, Item>]
    ) -> [ArraySection<Metadata, Item>] {
        let map = SectionMap(update.sections, oldCount: shown.count, newCount: data.count)
        let reloaded = Set(update.sections.updates)
        return data.indices.map { new in
            let old = map.oldIndex[new]
            guard old >= 0, !reloaded.contains(old) else { return data[new] }
            let leaving = Set(update.itemDeletes.filter { $0.section == old }.map(\.item))
                .union(update.itemMoves.filter { $0.from.section == old }.map(\.from.item))
            var survivors = shown[old].items.indices.filter { !leaving.contains($0) }.makeIterator()
            var arriving: [Int: Item] = [:]
            for path in update.itemInserts where path.section == new {
                arriving[path.item] = data[new].items[path.item]
            }
            for move in update.itemMoves where move.to.section == new {
                arriving[move.to.item] = shown[move.from.section].items[move.from.item]
            }
            let reloadedItems = Set(update.itemReloads.filter { $0.section == old }.map(\.item))
            var items: [Item] = []
            for position in data[new].items.indices {
                if let item = arriving[position] {
                    items.append(item)
                } else if let survivor = survivors.next() {
                    items.append(
                        reloadedItems.contains(survivor)
                            ? data[new].items[position] : shown[old].items[survivor])
                }
            }
            return ArraySection(metadata: shown[old].metadata, items: items)
        }
    }
}

/// Where each section of a batch goes: old index ↔ new index (-1: deleted or inserted), and
/// which sections the batch itself changes (deleted, reloaded, moved; inserted, moved to).
private struct SectionMap {
    var newIndex: [Int]
    var oldIndex: [Int]
    var oldChanged: [Bool]
    var newChanged: [Bool]

    init(_ sections: ArrayChangeset, oldCount: Int, newCount: Int) {
        newIndex = [Int](repeating: -1, count: oldCount)
        oldIndex = [Int](repeating: -1, count: newCount)
        oldChanged = [Bool](repeating: false, count: oldCount)
        newChanged = [Bool](repeating: false, count: newCount)
        var leaves = [Bool](repeating: false, count: oldCount)
        var placed = [Bool](repeating: false, count: newCount)
        for index in sections.deletes { leaves[index] = true }
        for index in sections.updates { oldChanged[index] = true }
        for index in sections.inserts {
            placed[index] = true
            newChanged[index] = true
        }
        for move in sections.moves {
            leaves[move.from] = true
            oldChanged[move.from] = true
            placed[move.to] = true
            newChanged[move.to] = true
            newIndex[move.from] = move.to
            oldIndex[move.to] = move.from
        }
        var old = 0
        for new in 0..<newCount where !placed[new] {
            while old < oldCount && leaves[old] { old += 1 }
            guard old < oldCount else { break }
            newIndex[old] = new
            oldIndex[new] = old
            if oldChanged[old] { newChanged[new] = true }
            old += 1
        }
    }
}
