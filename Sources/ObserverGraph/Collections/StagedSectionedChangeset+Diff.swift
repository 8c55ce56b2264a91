// The sectioned diff: sections matched by identity, items matched by identity across all
// sections (so an item that changed section is a move), then staged for batch updates.

extension StagedSectionedChangeset where Metadata: Equatable, Item: Equatable {
    /// The stages from `old` to `new`: sections are matched by `sectionID` of their metadata,
    /// items by `itemID` across all sections, and contents compared with `==` (a section whose
    /// metadata changed, or an item whose content changed, is reloaded). An item that moved to
    /// another section is a move. Items of a deleted section are deleted with it, and an
    /// inserted section brings its items (also those that were elsewhere before).
    ///
    ///     let staged = StagedSectionedChangeset(
    ///         from: shown, to: fresh, sectionIdentifiedBy: \.title, itemIdentifiedBy: \.id)
    ///
    /// Thread safety: pure. Callbacks: `sectionID`, `itemID`, `==` of `Metadata` and `Item`.
    /// - Complexity: O(S + N) expected time for S sections and N items in all, as the linear
    ///   `ArrayChangeset.diff`, plus O(K log K) for the K items or sections out of order.
    @inlinable
    public init<SectionID: Hashable, ItemID: Hashable>(
        from old: [ArraySection<Metadata, Item>], to new: [ArraySection<Metadata, Item>],
        sectionIdentifiedBy sectionID: (Metadata) -> SectionID, itemIdentifiedBy itemID: (Item) -> ItemID
    ) {
        var builder = _SectionedStager(old: old, new: new)
        builder.match(
            sections: ArrayDiff.hashedOrigins(
                old.map { sectionID($0.metadata) }, new.map { sectionID($0.metadata) }),
            items: ArrayDiff.hashedOrigins(
                old.flatMap { $0.items.map(itemID) }, new.flatMap { $0.items.map(itemID) }))
        self.init(stages: builder.stages())
    }
}

/// The work of the sectioned diff, step by step.
@usableFromInline
struct _SectionedStager<Metadata: Equatable, Item: Equatable> {
    @usableFromInline let old: [ArraySection<Metadata, Item>]
    @usableFromInline let new: [ArraySection<Metadata, Item>]
    /// For each new section, its old index (-1: inserted); for each old section, its new index.
    @usableFromInline var sectionOrigin: [Int] = []
    @usableFromInline var sectionTarget: [Int] = []
    /// Flat item numbering, section by section; the path of each flat index.
    @usableFromInline var oldPaths: [ItemPath] = []
    @usableFromInline var newPaths: [ItemPath] = []
    /// For each new flat item, the old flat item it keeps (-1: inserted), and back.
    @usableFromInline var itemOrigin: [Int] = []
    @usableFromInline var itemTarget: [Int] = []

    @inlinable
    init(old: [ArraySection<Metadata, Item>], new: [ArraySection<Metadata, Item>]) {
        self.old = old
        self.new = new
    }

    @inlinable
    mutating func match(sections: [Int], items: [Int]) {
        sectionOrigin = sections
        sectionTarget = [Int](repeating: -1, count: old.count)
        for (position, origin) in sections.enumerated() where origin >= 0 { sectionTarget[origin] = position }
        for (s, section) in old.enumerated() {
            for i in section.items.indices { oldPaths.append(ItemPath(section: s, item: i)) }
        }
        for (s, section) in new.enumerated() {
            for i in section.items.indices { newPaths.append(ItemPath(section: s, item: i)) }
        }
        // An item keeps its identity only between sections that survive.
        itemOrigin = items
        itemTarget = [Int](repeating: -1, count: oldPaths.count)
        for (flat, origin) in items.enumerated() where origin >= 0 {
            if sectionTarget[oldPaths[origin].section] >= 0 && sectionOrigin[newPaths[flat].section] >= 0 {
                itemTarget[origin] = flat
            } else {
                itemOrigin[flat] = -1
            }
        }
    }

    @inlinable
    func oldItem(_ flat: Int) -> Item { old[oldPaths[flat].section].items[oldPaths[flat].item] }

    @inlinable
    func stages() -> [SectionedStage<Metadata, Item>] {
        var stages: [SectionedStage<Metadata, Item>] = []
        // 1. Deletes: sections that go, items that go from sections that stay.
        var sectionDeletes: [Int] = []
        var itemDeletes: [ItemPath] = []
        var afterDeletes: [ArraySection<Metadata, Item>] = []
        var survivingFlats: [[Int]] = []  // per section left after 1: the old flat items it holds
        var flat = 0
        for (s, section) in old.enumerated() {
            defer { flat += section.items.count }
            guard sectionTarget[s] >= 0 else {
                sectionDeletes.append(s)
                continue
            }
            var kept: [Int] = []
            for i in section.items.indices {
                if itemTarget[flat + i] >= 0 {
                    kept.append(flat + i)
                } else {
                    itemDeletes.append(ItemPath(section: s, item: i))
                }
            }
            survivingFlats.append(kept)
            afterDeletes.append(ArraySection(metadata: section.metadata, items: kept.map(oldItem)))
        }
        let first = SectionedBatchUpdate(
            sections: ArrayChangeset(sortedDeletes: sectionDeletes, inserts: [], updates: [], moves: []),
            itemDeletes: itemDeletes)
        if !first.isEmpty { stages.append(SectionedStage(sections: afterDeletes, update: first)) }

        // 2. Section inserts (with their items) and moves.
        var survivorIndex = [Int](repeating: -1, count: old.count)
        var count = 0
        for s in old.indices where sectionTarget[s] >= 0 {
            survivorIndex[s] = count
            count += 1
        }
        let sectionOrigins = sectionOrigin.map { $0 >= 0 ? survivorIndex[$0] : -1 }
        let sectionChanges = ArrayChangeset.fromOrigins(sectionOrigins, oldCount: count, updated: nil)
        var arranged: [ArraySection<Metadata, Item>] = []
        var itemPlace = [ItemPath?](repeating: nil, count: oldPaths.count)  // old flat → path after 2
        for (s, origin) in sectionOrigins.enumerated() {
            guard origin >= 0 else {
                arranged.append(new[s])
                continue
            }
            for (i, flat) in survivingFlats[origin].enumerated() {
                itemPlace[flat] = ItemPath(section: s, item: i)
            }
            arranged.append(afterDeletes[origin])
        }
        if !sectionChanges.isEmpty {
            stages.append(
                SectionedStage(sections: arranged, update: SectionedBatchUpdate(sections: sectionChanges)))
        }

        // 3. Item inserts and moves, within and across sections (contents still the old ones).
        var itemInserts: [ItemPath] = []
        var itemMoves: [SectionedBatchUpdate.ItemMove] = []
        var placed: [ArraySection<Metadata, Item>] = arranged
        var reloads: [ItemPath] = []
        var sectionReloads: [Int] = []
        var newFlat = 0
        for (s, section) in new.enumerated() {
            defer { newFlat += section.items.count }
            guard sectionOrigin[s] >= 0 else { continue }
            if section.metadata != arranged[s].metadata { sectionReloads.append(s) }
            var stayers: [Int] = []  // for each item position: its index in this section after 2, or -1
            var items: [Item] = []
            for (j, item) in section.items.enumerated() {
                let origin = itemOrigin[newFlat + j]
                guard origin >= 0, let from = itemPlace[origin] else {
                    itemInserts.append(ItemPath(section: s, item: j))
                    items.append(item)
                    stayers.append(-1)
                    continue
                }
                let previous = oldItem(origin)
                items.append(previous)
                if previous != item { reloads.append(ItemPath(section: s, item: j)) }
                if from.section == s {
                    stayers.append(from.item)
                } else {
                    itemMoves.append(.init(from: from, to: ItemPath(section: s, item: j)))
                    stayers.append(-1)
                }
            }
            let kept = ArrayChangeset.longestIncreasingRun(stayers)
            for (j, index) in stayers.enumerated() where index >= 0 && !kept[j] {
                itemMoves.append(
                    .init(from: ItemPath(section: s, item: index), to: ItemPath(section: s, item: j)))
            }
            placed[s] = ArraySection(metadata: arranged[s].metadata, items: items)
        }
        let third = SectionedBatchUpdate(itemInserts: itemInserts, itemMoves: itemMoves)
        if !third.isEmpty { stages.append(SectionedStage(sections: placed, update: third)) }

        // 4. Reloads at the final indices; a reloaded section reloads its items.
        let reloadedSections = Set(sectionReloads)
        let fourth = SectionedBatchUpdate(
            sections: ArrayChangeset(sortedDeletes: [], inserts: [], updates: sectionReloads, moves: []),
            itemReloads: reloads.filter { !reloadedSections.contains($0.section) })
        if !fourth.isEmpty { stages.append(SectionedStage(sections: new, update: fourth)) }
        return stages
    }
}
