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

@Suite("Sectioned staged changesets")
struct StagedSectionedChangesetTests {
    @Test("10,000 random pairs of sections: every stage is a valid batch and the stages end at the target")
    func randomPairsValidate() {
        var random = Generator(seed: 12)
        var crossSectionMoves = 0
        for trial in 0..<10_000 {
            let old = randomSections(&random)
            let new = trial % 2 == 0 ? perturbed(old, &random) : randomSections(&random)
            let staged = StagedSectionedChangeset(
                from: old, to: new, sectionIdentifiedBy: \.id, itemIdentifiedBy: \.id)
            do {
                try BatchUpdateValidator.validate(staged, from: old, to: new)
            } catch {
                Issue.record("trial \(trial): \(error)\n\(old)\n→ \(new)\n\(staged.stages.map(\.update))")
                return
            }
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
