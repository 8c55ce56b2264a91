import ObserverGraph
import ObserverGraphTesting
import Testing

private struct Header: Equatable, Sendable {
    let id: Int
    var title: Int
}

private struct Cell: Equatable, Sendable {
    let id: Int
    var text: Int
}

private typealias Sections = [ArraySection<Header, Cell>]

/// A seeded generator (SplitMix64).
private struct Generator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random sections with distinct section ids and item ids spread over them.
private func randomSections(_ random: inout Generator) -> Sections {
    let sectionIDs = Array((0..<6).shuffled(using: &random).prefix(Int.random(in: 0...5, using: &random)))
    var sections = sectionIDs.map {
        ArraySection(metadata: Header(id: $0, title: Int.random(in: 0..<2, using: &random)), items: [Cell]())
    }
    guard !sections.isEmpty else { return sections }
    for id in (0..<24).shuffled(using: &random).prefix(Int.random(in: 0...16, using: &random)) {
        sections[Int.random(in: 0..<sections.count, using: &random)].items.append(
            Cell(id: id, text: Int.random(in: 0..<2, using: &random)))
    }
    return sections
}

/// `old` perturbed: items moved within and across sections, contents and titles changed,
/// sections reordered, some items and sections added or removed.
private func perturbed(_ old: Sections, _ random: inout Generator) -> Sections {
    var sections = old
    guard !sections.isEmpty else { return randomSections(&random) }
    for _ in 0..<Int.random(in: 1...5, using: &random) {
        let s = Int.random(in: 0..<sections.count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where !sections[s].items.isEmpty:
            let item = sections[s].items.remove(
                at: Int.random(in: 0..<sections[s].items.count, using: &random))
            let t = Int.random(in: 0..<sections.count, using: &random)
            sections[t].items.insert(item, at: Int.random(in: 0...sections[t].items.count, using: &random))
        case 1 where !sections[s].items.isEmpty:
            sections[s].items[Int.random(in: 0..<sections[s].items.count, using: &random)].text += 5
        case 2: sections[s].metadata.title += 5
        case 3: sections.swapAt(s, Int.random(in: 0..<sections.count, using: &random))
        case 4 where !sections[s].items.isEmpty:
            sections[s].items.remove(at: Int.random(in: 0..<sections[s].items.count, using: &random))
        default: sections[s].items.append(Cell(id: 100 + Int.random(in: 0..<50, using: &random), text: 0))
        }
    }
    // Keep item ids distinct.
    var seen = Set<Int>()
    for s in sections.indices { sections[s].items.removeAll { !seen.insert($0.id).inserted } }
    return sections
}

/// `perturbed(_:_:)` applied several times.
private func perturbed(_ old: Sections, _ random: inout Generator, rounds: ClosedRange<Int>) -> Sections {
    var sections = old
    for _ in 0..<Int.random(in: rounds, using: &random) { sections = perturbed(sections, &random) }
    return sections
}

/// Sections whose item ids repeat (within and across sections).
private func sectionsWithDuplicates(_ random: inout Generator) -> Sections {
    var sections = randomSections(&random)
    for s in sections.indices {
        for i in sections[s].items.indices {
            sections[s].items[i] = Cell(id: sections[s].items[i].id % 5, text: sections[s].items[i].text)
        }
    }
    return sections
}

/// The staged changeset from `old` to `new`, or `nil` (recorded) when a stage is not a valid
/// batch or the stages do not end at `new`.
private func validatedStages(_ old: Sections, _ new: Sections, trial: Int) -> StagedSectionedChangeset<
    Header, Cell
>? {
    let staged = StagedSectionedChangeset(
        from: old, to: new, sectionIdentifiedBy: \.id, itemIdentifiedBy: \.id)
    do {
        try BatchUpdateValidator.validate(staged, from: old, to: new)
        return staged
    } catch {
        Issue.record("trial \(trial): \(error)\n\(old)\n→ \(new)\n\(staged.stages.map(\.update))")
        return nil
    }
}

/// What matching every item by identity across the sections that survive implies (distinct
/// ids): how many items are deleted, inserted, moved across and within sections, and reloaded.
private struct MatchingCounts: Equatable {
    var deletes = 0
    var inserts = 0
    var acrossMoves = 0
    var withinMoves = 0
    var reloads = 0

    init() {}

    init(model old: Sections, _ new: Sections) {
        let surviving = Set(old.map(\.metadata.id)).intersection(new.map(\.metadata.id))
        var oldPlace: [Int: (section: Int, cell: Cell)] = [:]
        for section in old where surviving.contains(section.metadata.id) {
            for cell in section.items { oldPlace[cell.id] = (section.metadata.id, cell) }
        }
        var newPlace: [Int: Int] = [:]
        for section in new where surviving.contains(section.metadata.id) {
            for cell in section.items { newPlace[cell.id] = section.metadata.id }
        }
        deletes = oldPlace.keys.filter { newPlace[$0] == nil }.count
        for section in new where surviving.contains(section.metadata.id) {
            let before = old.first { $0.metadata.id == section.metadata.id }!
            // The old order of the items that stay in this section, by id.
            var rank: [Int: Int] = [:]
            for cell in before.items where newPlace[cell.id] == section.metadata.id {
                rank[cell.id] = rank.count
            }
            var stayers: [Int] = []
            for cell in section.items {
                guard let (from, previous) = oldPlace[cell.id] else {
                    inserts += 1
                    continue
                }
                if from != section.metadata.id { acrossMoves += 1 } else { stayers.append(rank[cell.id]!) }
                if previous != cell && before.metadata == section.metadata { reloads += 1 }
            }
            // The fewest moves that order them (the flat diff's, tested against a longest
            // increasing run in the kit's own tests).
            withinMoves += ArrayChangeset.diff(from: stayers.sorted(), to: stayers).moves.count
        }
    }

    init(staged: StagedSectionedChangeset<Header, Cell>) {
        for update in staged.stages.map(\.update) {
            deletes += update.itemDeletes.count
            inserts += update.itemInserts.count
            acrossMoves += update.itemMoves.filter { $0.from.section != $0.to.section }.count
            withinMoves += update.itemMoves.filter { $0.from.section == $0.to.section }.count
            reloads += update.itemReloads.count
        }
    }
}

@Suite("Sectioned staged changesets")
struct StagedSectionedChangesetTests {
    @Test("10,000 random pairs of sections: every stage is a valid batch and the stages end at the target")
    func randomPairsValidate() {
        var random = Generator(seed: 12)
        var crossSectionMoves = 0
        for trial in 0..<10_000 {
            let old = randomSections(&random)
            let new = trial % 2 == 0 ? perturbed(old, &random) : randomSections(&random)
            guard let staged = validatedStages(old, new, trial: trial) else { return }
            crossSectionMoves +=
                staged.stages.flatMap(\.update.itemMoves).filter { $0.from.section != $0.to.section }.count
        }
        #expect(crossSectionMoves > 500)
    }

    @Test("An item moved to another section is one move; a changed title is a section reload")
    func crossSectionMove() throws {
        let old: Sections = [
            ArraySection(
                metadata: Header(id: 1, title: 0), items: [Cell(id: 10, text: 0), Cell(id: 11, text: 0)]),
            ArraySection(metadata: Header(id: 2, title: 0), items: [Cell(id: 20, text: 0)]),
        ]
        let new: Sections = [
            ArraySection(metadata: Header(id: 1, title: 0), items: [Cell(id: 11, text: 0)]),
            ArraySection(
                metadata: Header(id: 2, title: 9), items: [Cell(id: 20, text: 0), Cell(id: 10, text: 3)]),
        ]
        let staged = StagedSectionedChangeset(
            from: old, to: new, sectionIdentifiedBy: \.id, itemIdentifiedBy: \.id)
        #expect(
            staged.stages.map(\.update) == [
                SectionedBatchUpdate(
                    itemMoves: [.init(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 1))]
                ),
                SectionedBatchUpdate(sections: ArrayChangeset(updates: [1])),
            ])
        try BatchUpdateValidator.validate(staged, from: old, to: new)
    }

    @Test("5,000 random pairs with distinct ids: the changes are those of matching every item by identity")
    func matchingByIdentity() {
        var random = Generator(seed: 31)
        var seen = MatchingCounts()
        for trial in 0..<5_000 {
            let old = randomSections(&random)
            let new = perturbed(old, &random, rounds: 1...4)
            let staged = StagedSectionedChangeset(
                from: old, to: new, sectionIdentifiedBy: \.id, itemIdentifiedBy: \.id)
            let expected = MatchingCounts(model: old, new)
            guard MatchingCounts(staged: staged) == expected else {
                Issue.record(
                    "trial \(trial): \(MatchingCounts(staged: staged)) != \(expected)\n\(old)\n→ \(new)")
                return
            }
            seen.deletes += expected.deletes
            seen.inserts += expected.inserts
            seen.acrossMoves += expected.acrossMoves
            seen.withinMoves += expected.withinMoves
            seen.reloads += expected.reloads
        }
        // Each kind of change happened often.
        #expect(seen.deletes > 500 && seen.inserts > 500 && seen.acrossMoves > 500)
        #expect(seen.withinMoves > 200 && seen.reloads > 500)
    }

    @Test("A hundred sections of a hundred items, 1% moved across sections: one stage of exactly those moves")
    func largeCrossSectionMoves() throws {
        var random = Generator(seed: 11)
        let old: Sections = (0..<100).map { s in
            ArraySection(
                metadata: Header(id: s, title: 0),
                items: (s * 100..<s * 100 + 100).map { Cell(id: $0, text: 0) })
        }
        var new = old
        var moved: [Int: (from: Int, to: Int)] = [:]
        for id in (0..<10_000).shuffled(using: &random).prefix(100) {
            let from = new.firstIndex { $0.items.contains { $0.id == id } }!
            let cell = new[from].items.remove(at: new[from].items.firstIndex { $0.id == id }!)
            var to = Int.random(in: 0..<100, using: &random)
            while to == from { to = Int.random(in: 0..<100, using: &random) }
            new[to].items.insert(cell, at: Int.random(in: 0...new[to].items.count, using: &random))
            moved[id] = (from, to)
        }
        let staged = StagedSectionedChangeset(
            from: old, to: new, sectionIdentifiedBy: \.id, itemIdentifiedBy: \.id)
        try #require(staged.stages.count == 1)
        let update = staged.stages[0].update
        #expect(update.sections.isEmpty && update.itemDeletes.isEmpty && update.itemInserts.isEmpty)
        #expect(update.itemReloads.isEmpty)
        #expect(update.itemMoves.count == 100)
        // Each move takes a moved item from where it was (after the earlier moves out of its
        // old section, still there) to where it is now.
        let staging = staged.stages[0].sections
        for move in update.itemMoves {
            let id = new[move.to.section].items[move.to.item].id
            #expect(moved[id]?.to == move.to.section)
            #expect(staging[move.to.section].items[move.to.item].id == id)
            #expect(old[move.from.section].items[move.from.item].id == id)
        }
        try BatchUpdateValidator.validate(staged, from: old, to: new)
    }

    @Test(
        "5,000 random pairs with repeated ids: every stage is a valid batch and the stages end at the target")
    func duplicateIdentities() {
        var random = Generator(seed: 5)
        for trial in 0..<5_000 {
            let old = sectionsWithDuplicates(&random)
            let new =
                trial % 2 == 0 ? perturbed(old, &random, rounds: 1...3) : sectionsWithDuplicates(&random)
            guard validatedStages(old, new, trial: trial) != nil else { return }
        }
    }

    @Test("The sectioned validator rejects item changes in changed sections and wrong counts")
    func validatorRejects() {
        func rule(_ update: SectionedBatchUpdate, _ old: [Int], _ new: [Int]) -> BatchUpdateViolation.Rule? {
            do {
                try BatchUpdateValidator.validate(update, oldItemCounts: old, newItemCounts: new)
                return nil
            } catch { return error.rule }
        }
        let deleteSection = ArrayChangeset(deletes: [0])
        #expect(
            rule(
                SectionedBatchUpdate(sections: deleteSection, itemDeletes: [ItemPath(section: 0, item: 0)]),
                [1, 1], [1])
                == .itemChangeInChangedSection)
        #expect(
            rule(SectionedBatchUpdate(itemDeletes: [ItemPath(section: 1, item: 0)]), [1, 1], [1, 1])
                == .countMismatch)
        #expect(
            rule(SectionedBatchUpdate(itemDeletes: [ItemPath(section: 1, item: 0)]), [1, 1], [1, 0]) == nil)
        #expect(
            rule(SectionedBatchUpdate(itemInserts: [ItemPath(section: 0, item: 2)]), [1], [2])
                == .indexOutOfRange)
        // A negative item count is refused, not trusted (a range of -1 items would trap).
        #expect(rule(SectionedBatchUpdate(), [-1], [-1]) == .countMismatch)
        #expect(
            rule(SectionedBatchUpdate(itemInserts: [ItemPath(section: 0, item: 0)]), [0], [-1])
                == .countMismatch)
        let move = SectionedBatchUpdate.ItemMove(
            from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))
        #expect(rule(SectionedBatchUpdate(itemMoves: [move]), [1, 0], [0, 1]) == nil)
        #expect(
            rule(
                SectionedBatchUpdate(itemMoves: [move], itemReloads: [ItemPath(section: 1, item: 0)]),
                [1, 1], [0, 2])
                == .reloadWithMove)
        #expect(
            rule(
                SectionedBatchUpdate(
                    itemDeletes: [ItemPath(section: 0, item: 0)], itemReloads: [ItemPath(section: 0, item: 0)]
                ), [1], [0])
                == .oldIndexUsedTwice)
    }
}
