// Scenario 9: diff. The changeset between two 10,000-element `[Int]` arrays that differ by 1%:
// 50 elements deleted and 50 new ones inserted at seeded random places (the kit's own test
// "A large diff with 1% changed stays exact" builds the same arrays from the same seed).
// Unit: microseconds per diff.
//
// - kit: `ArrayChangeset.diff(from:to:)`. `Int` is `Hashable`, so this is the hashable
//   overload: Myers' shortest script, then equal deleted and inserted elements paired into moves.
// - `difference(from:)` (the reference): the standard library's diff of the same arrays.
// - `difference(from:).inferringMoves()`: the same plus the standard library's move pairing, the
//   closer match to what the kit's changeset reports.
//
// Applying the kit's changeset to the old array must give the new one; that is checked once,
// outside the timed part. Every timed diff must report 50 deletions and 50 insertions.

import ObserverGraph

enum Diff {
    static let family = ScenarioFamily(
        id: "diff",
        summary: "ArrayChangeset.diff of 10,000 Ints with 1% changed vs difference(from:), µs per diff",
        run: run)

    static let kit = "kit ArrayChangeset.diff"
    static let standardLibrary = "difference(from:)"
    static let standardLibraryMoves = "difference(from:).inferringMoves()"

    static func scenario(_ n: Int) -> String { "diff N=\(sizeLabel(n)) 1% changed" }

    static func run(plan: Plan, report: Report) {
        let n = plan.diffSize
        let changes = plan.diffChanges
        progress(scenario(n))

        // The arrays of the kit's test: 0..<n, then `changes` random removals, then `changes`
        // insertions of values the old array does not hold, at random places.
        var random = SeededGenerator(seed: 99)
        let old = Array(0..<n)
        var new = old
        for _ in 0..<changes { new.remove(at: Int.random(in: 0..<new.count, using: &random)) }
        for i in 0..<changes { new.insert(2 * n + i, at: Int.random(in: 0...new.count, using: &random)) }

        // Once, untimed: the kit's changeset reproduces `new`, and the standard library's too.
        let changeset = ArrayChangeset.diff(from: old, to: new)
        verify(
            changeset.deletes.count == changes && changeset.inserts.count == changes
                && changeset.moves.isEmpty
                && changeset.updates.isEmpty,
            "kit diff: \(changeset.deletes.count) deletes, \(changeset.inserts.count) inserts, "
                + "\(changeset.moves.count) moves, \(changeset.updates.count) updates")
        do {
            let rebuilt = try changeset.apply(to: old, newElements: new)
            verify(rebuilt == new, "kit diff: applying the changeset does not give the new array")
        } catch {
            verify(false, "kit diff: the changeset does not apply: \(error)")
        }
        verify(
            old.applying(new.difference(from: old)) == new, "difference(from:) does not give the new array")

        // The arrays go through `opaque` on every diff, so no diff can be computed once and reused.
        func timed(_ name: String, _ diff: @escaping ([Int], [Int]) -> (removals: Int, insertions: Int))
            -> Contender
        {
            let oneDiff: (Int) -> UInt64 = { repetitions in
                var removals = 0
                var insertions = 0
                let start = monotonicNanoseconds()
                for _ in 0..<repetitions {
                    let counts = diff(opaque(old), opaque(new))
                    removals &+= counts.removals
                    insertions &+= counts.insertions
                }
                let elapsed = monotonicNanoseconds() - start
                verify(
                    removals == repetitions * changes && insertions == repetitions * changes,
                    "\(name): \(removals) removals and \(insertions) insertions in \(repetitions) diffs")
                return elapsed
            }
            let repetitions = calibrateRepetitions(targetNanoseconds: plan.diffSampleNanoseconds, oneDiff)
            return Contender(name: name) { [Double(oneDiff(repetitions)) / Double(repetitions) / 1_000] }
        }

        let contenders = [
            timed(kit) { old, new in
                let changeset = ArrayChangeset.diff(from: old, to: new)
                blackHole(changeset)
                return (changeset.deletes.count, changeset.inserts.count)
            },
            timed(standardLibrary) { old, new in
                let difference = new.difference(from: old)
                blackHole(difference)
                return (difference.removals.count, difference.insertions.count)
            },
            timed(standardLibraryMoves) { old, new in
                let difference = new.difference(from: old).inferringMoves()
                blackHole(difference)
                return (difference.removals.count, difference.insertions.count)
            },
        ]
        let stats = roundRobin(contenders, samples: plan.diffSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(n), implementation: contender.name, stats: result[0], unit: "µs/diff",
                reference: contender.name == standardLibrary)
        }
    }
}
