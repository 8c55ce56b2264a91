// Scenario 11: sectioned diff. 100 sections of 100 items (distinct ids); the new sections have
// 1% of the items (100) moved to random places in other sections. Unit: microseconds per diff.
//
// - kit staged: `StagedSectionedChangeset(from:to:sectionIdentifiedBy:itemIdentifiedBy:)`, the
//   batch updates for a sectioned view, with the 100 items as cross-section moves;
// - kit flat diff: `ArrayChangeset.diff(from:to:)` of the 10,000 item ids, flattened: the items
//   matched all at once (here by hashing, the moves being over its Myers limit), where the
//   sectioned diff matches them within each section first;
// - per-section `difference(from:)` (the reference): the loop a user writes without a
//   sectioned diff, which reports each moved item as a delete and an insert.
//
// Every staged diff must report 100 item moves.

import ObserverGraph

enum SectionedDiff {
    static let family = ScenarioFamily(
        id: "sectioneddiff",
        summary: "staged sectioned diff, 100 x 100 items with 1% moved across sections, µs per diff",
        run: run)

    static let staged = "kit StagedSectionedChangeset"
    static let flat = "kit flat diff of the items"
    static let perSection = "per-section difference(from:)"
    static let scenario = "sectioned diff 100x100 1% moved across sections"

    struct Header: Equatable, Sendable {
        let id: Int
    }

    static func run(plan: Plan, report: Report) {
        progress(scenario)
        var random = SeededGenerator(seed: 11)
        let old = (0..<100).map { s in
            ArraySection(metadata: Header(id: s), items: Array((s * 100)..<(s * 100 + 100)))
        }
        var new = old
        for item in (0..<10_000).shuffled(using: &random).prefix(100) {
            let from = item / 100
            new[from].items.removeAll { $0 == item }
            var to = Int.random(in: 0..<100, using: &random)
            while to == from { to = Int.random(in: 0..<100, using: &random) }
            new[to].items.insert(item, at: Int.random(in: 0...new[to].items.count, using: &random))
        }
        let oldFlat = old.flatMap(\.items)
        let newFlat = new.flatMap(\.items)

        func timed(_ name: String, _ body: @escaping () -> Int) -> Contender {
            let oneRound: (Int) -> UInt64 = { repetitions in
                var total = 0
                let start = monotonicNanoseconds()
                for _ in 0..<repetitions { total &+= body() }
                let elapsed = monotonicNanoseconds() - start
                verify(total > 0, "\(name): no change found")
                return elapsed
            }
            let repetitions = calibrateRepetitions(targetNanoseconds: plan.diffSampleNanoseconds, oneRound)
            return Contender(name: name) { [Double(oneRound(repetitions)) / Double(repetitions) / 1_000] }
        }
        let contenders = [
            timed(staged) {
                let stages = StagedSectionedChangeset(
                    from: opaque(old), to: opaque(new), sectionIdentifiedBy: \.id, itemIdentifiedBy: { $0 })
                let moves = stages.stages.reduce(0) { $0 + $1.update.itemMoves.count }
                verify(moves == 100, "staged: \(moves) item moves, expected 100")
                return moves
            },
            timed(flat) {
                let changeset = ArrayChangeset.diff(from: opaque(oldFlat), to: opaque(newFlat))
                blackHole(changeset)
                return changeset.moves.count + changeset.inserts.count + 1
            },
            timed(perSection) {
                let oldSections = opaque(old)
                let newSections = opaque(new)
                var edits = 0
                for s in oldSections.indices {
                    let difference = newSections[s].items.difference(from: oldSections[s].items)
                    edits += difference.insertions.count + difference.removals.count
                }
                return edits
            },
        ]
        let stats = roundRobin(contenders, samples: plan.diffSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario, implementation: contender.name, stats: result[0], unit: "µs/diff",
                reference: contender.name == perSection)
        }
    }
}
