// The sectioned diff: sections matched by identity, items matched by identity across all
// sections (so an item that changed section is a move), then staged for batch updates.
//
// Items are matched section by section first: each surviving section against its old self, by
// the same hybrid as `ArrayChangeset.diff` (common ends trimmed, then Myers while few items
// changed), which touches only the items that differ and hashes none in the usual case. Only
// the items left unmatched there (those that changed section, or were added or removed) are
// then matched across all sections, by hashing. For distinct identities this is exactly the
// matching of every item by identity across all sections.

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
    /// Identities should be unique; duplicates are matched within their section first (in
    /// order), then across sections in order.
    ///
    /// Thread safety: pure. Callbacks: `sectionID`, `itemID`, `==` of `Metadata` and `Item`.
    /// - Complexity: O(S + N) expected time for S sections and N items in all, plus O(K log K)
    ///   for the K items or sections out of order; items that stay in their section cost a
    ///   comparison each (no hashing) while few of each section's items change.
    @inlinable
    public init<SectionID: Hashable, ItemID: Hashable>(
        from old: [ArraySection<Metadata, Item>], to new: [ArraySection<Metadata, Item>],
        sectionIdentifiedBy sectionID: (Metadata) -> SectionID, itemIdentifiedBy itemID: (Item) -> ItemID
    ) {
        var builder = _SectionedStager(old: old, new: new)
        builder.match(
            sections: ArrayDiff.hashedOrigins(
                old.map { sectionID($0.metadata) }, new.map { sectionID($0.metadata) }),
            oldIDs: Self.flatIDs(old, itemID), newIDs: Self.flatIDs(new, itemID))
        self.init(stages: builder.stages())
    }

    /// The identities of every item, section after section.
    @inlinable
    static func flatIDs<ItemID>(_ sections: [ArraySection<Metadata, Item>], _ itemID: (Item) -> ItemID)
        -> [ItemID]
    {
        let count = sections.reduce(0) { $0 + $1.items.count }
        // Not for no item: that would write the count of the shared empty array's storage,
        // which other threads read.
        guard count > 0 else { return [] }
        return [ItemID](unsafeUninitializedCapacity: count) { buffer, initialized in
            for section in sections {
                for item in section.items {
                    buffer.initializeElement(at: initialized, to: itemID(item))
                    initialized += 1
                }
            }
        }
    }
}

/// The work of the sectioned diff, step by step. Items are numbered flat, section after
/// section; `oldStart`/`newStart` say where each section's items begin.
@usableFromInline
struct _SectionedStager<Metadata: Equatable, Item: Equatable> {
    @usableFromInline let old: [ArraySection<Metadata, Item>]
    @usableFromInline let new: [ArraySection<Metadata, Item>]
    /// For each new section, its old index (-1: inserted); for each old section, its new index.
    @usableFromInline var sectionOrigin: [Int] = []
    @usableFromInline var sectionTarget: [Int] = []
    /// The flat index of each section's first item, and one more entry: the number of items.
    @usableFromInline var oldStart: [Int] = []
    @usableFromInline var newStart: [Int] = []
    /// For each new flat item, the old flat item it keeps (-1: inserted), and back.
    @usableFromInline var itemOrigin: [Int] = []
    @usableFromInline var itemTarget: [Int] = []

    @inlinable
    init(old: [ArraySection<Metadata, Item>], new: [ArraySection<Metadata, Item>]) {
        self.old = old
        self.new = new
    }

    /// Matches sections by `sections` (the origins of the new ones) and items by identity, only
    /// between sections that survive: first within each section, then across sections.
    @inlinable
    mutating func match<ItemID: Hashable>(sections: [Int], oldIDs: [ItemID], newIDs: [ItemID]) {
        sectionOrigin = sections
        sectionTarget = [Int](repeating: -1, count: old.count)
        for (position, origin) in sections.enumerated() where origin >= 0 { sectionTarget[origin] = position }
        oldStart = Self.starts(old)
        newStart = Self.starts(new)
        itemOrigin = [Int](repeating: -1, count: newIDs.count)
        for (t, s) in sectionOrigin.enumerated() where s >= 0 {
            ArrayDiff.hashedOrigins(
                oldIDs, oldStart[s]..<oldStart[s + 1], newIDs, newStart[t]..<newStart[t + 1],
                into: &itemOrigin)
        }
        itemTarget = [Int](repeating: -1, count: oldIDs.count)
        for (flat, origin) in itemOrigin.enumerated() where origin >= 0 { itemTarget[origin] = flat }
        // What is left: items that changed section (or came and went), matched by hashing.
        var oldLeft: [Int] = []
        for s in old.indices where sectionTarget[s] >= 0 {
            for flat in oldStart[s]..<oldStart[s + 1] where itemTarget[flat] < 0 { oldLeft.append(flat) }
        }
        guard !oldLeft.isEmpty else { return }
        // Hashed apart, so that the table is sized for them, not for every item.
        let leftIDs = oldLeft.map { oldIDs[$0] }
        var available = ArrayDiff.Chains(leftIDs, 0..<leftIDs.count)
        for t in new.indices where sectionOrigin[t] >= 0 {
            for flat in newStart[t]..<newStart[t + 1] where itemOrigin[flat] < 0 {
                guard let left = available.take(newIDs[flat], in: leftIDs) else { continue }
                itemOrigin[flat] = oldLeft[left]
                itemTarget[oldLeft[left]] = flat
            }
        }
    }

    /// Where each section's items begin in the flat numbering, and the number of items.
    @inlinable
    static func starts(_ sections: [ArraySection<Metadata, Item>]) -> [Int] {
        var starts = [0]
        starts.reserveCapacity(sections.count + 1)
        for section in sections { starts.append(starts[starts.count - 1] + section.items.count) }
        return starts
    }

    /// The old section holding the old flat item `flat`.
    @inlinable
    func oldSection(of flat: Int) -> Int {
        // The last section starting at or before `flat` (empty sections start where the next does).
        var low = 0
        var high = old.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if oldStart[middle] <= flat { low = middle } else { high = middle - 1 }
        }
        return low
    }

    @inlinable
    func stages() -> [SectionedStage<Metadata, Item>] {
        var stages: [SectionedStage<Metadata, Item>] = []
        // 1. Deletes: sections that go, items that go from sections that stay. A section that
        //    loses no item is kept as it is (no copy of its items).
        var sectionDeletes: [Int] = []
        var itemDeletes: [ItemPath] = []
        var afterDeletes: [ArraySection<Metadata, Item>] = []
        afterDeletes.reserveCapacity(old.count)
        // For each old flat item that stays in a section that lost items: its index in its
        // section after 1 (and 2). In a section that lost none, it is its index (see `place`).
        var placeAfterDeletes: [Int] = []
        var lostItems = [Bool](repeating: false, count: old.count)
        for (s, section) in old.enumerated() {
            guard sectionTarget[s] >= 0 else {
                sectionDeletes.append(s)
                continue
            }
            let base = oldStart[s]
            var kept: [Item]?  // made at the first delete
            for i in section.items.indices where itemTarget[base + i] < 0 {
                if kept == nil {
                    kept = Array(section.items[..<i])
                    lostItems[s] = true
                    if placeAfterDeletes.isEmpty {
                        placeAfterDeletes = [Int](repeating: -1, count: oldStart[old.count])
                    }
                }
                itemDeletes.append(ItemPath(section: s, item: i))
            }
            guard var items = kept else {
                afterDeletes.append(section)
                continue
            }
            items.removeAll(keepingCapacity: true)
            for i in section.items.indices where itemTarget[base + i] >= 0 {
                placeAfterDeletes[base + i] = items.count
                items.append(section.items[i])
            }
            afterDeletes.append(ArraySection(metadata: section.metadata, items: items))
        }
        /// The index of the old flat item `flat` of old section `s` after 1.
        func place(_ flat: Int, in s: Int) -> Int {
            lostItems[s] ? placeAfterDeletes[flat] : flat - oldStart[s]
        }
        let first = SectionedBatchUpdate(
            sections: ArrayChangeset(sortedDeletes: sectionDeletes, inserts: [], updates: [], moves: []),
            itemDeletes: itemDeletes)
        if !first.isEmpty { stages.append(SectionedStage(sections: afterDeletes, update: first)) }

        // 2. Section inserts (with their items) and moves. A surviving old section `s` is at
        //    `sectionTarget[s]` after this step.
        var survivorIndex = [Int](repeating: -1, count: old.count)
        var count = 0
        for s in old.indices where sectionTarget[s] >= 0 {
            survivorIndex[s] = count
            count += 1
        }
        let sectionOrigins = sectionOrigin.map { $0 >= 0 ? survivorIndex[$0] : -1 }
        let sectionChanges = ArrayChangeset.fromOrigins(sectionOrigins, oldCount: count, updated: nil)
        var arranged: [ArraySection<Metadata, Item>] = []
        arranged.reserveCapacity(new.count)
        for (t, origin) in sectionOrigins.enumerated() {
            arranged.append(origin >= 0 ? afterDeletes[origin] : new[t])
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
        for (t, section) in new.enumerated() {
            let s = sectionOrigin[t]
            guard s >= 0 else { continue }
            if section.metadata != arranged[t].metadata { sectionReloads.append(t) }
            let base = newStart[t]
            let ownItems = oldStart[s]..<oldStart[s + 1]
            let ownOld = old[s].items
            let before = arranged[t].items
            // The section's items after this step, made at the first item not already in its
            // place (a section this step leaves as it is costs no copy).
            var items: [Item] = []
            var made = false
            /// Makes `items` from the first `count` items before this step.
            func make(_ count: Int) {
                made = true
                items.reserveCapacity(section.items.count)
                items.append(contentsOf: before[..<count])
            }
            var inOrder = true
            var lastStayer = -1
            for (j, item) in section.items.enumerated() {
                let origin = itemOrigin[base + j]
                guard origin >= 0 else {
                    itemInserts.append(ItemPath(section: t, item: j))
                    if !made { make(j) }
                    items.append(item)
                    continue
                }
                let own = ownItems.contains(origin)
                let from = own ? s : oldSection(of: origin)
                let previous =
                    own ? ownOld[origin - ownItems.lowerBound] : old[from].items[origin - oldStart[from]]
                if previous != item { reloads.append(ItemPath(section: t, item: j)) }
                let index = place(origin, in: from)
                if own {
                    if index < lastStayer { inOrder = false }
                    lastStayer = index
                } else {
                    itemMoves.append(
                        .init(
                            from: ItemPath(section: sectionTarget[from], item: index),
                            to: ItemPath(section: t, item: j)))
                }
                if made {
                    items.append(previous)
                } else if !own || index != j {
                    make(j)
                    items.append(previous)
                }
            }
            if !inOrder {
                // The items that stayed in this section and keep their relative order stay; the
                // others move. (For each position: its index after 2, or -1.)
                let stayers = (0..<section.items.count).map { j -> Int in
                    let origin = itemOrigin[base + j]
                    return ownItems.contains(origin) ? place(origin, in: s) : -1
                }
                let kept = ArrayChangeset.longestIncreasingRun(stayers)
                for (j, index) in stayers.enumerated() where index >= 0 && !kept[j] {
                    itemMoves.append(
                        .init(from: ItemPath(section: t, item: index), to: ItemPath(section: t, item: j)))
                }
            }
            if made {
                placed[t] = ArraySection(metadata: arranged[t].metadata, items: items)
            } else if before.count != section.items.count {
                // Every item in place; those after them moved to other sections.
                placed[t] = ArraySection(
                    metadata: arranged[t].metadata, items: Array(before[..<section.items.count]))
            }
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
