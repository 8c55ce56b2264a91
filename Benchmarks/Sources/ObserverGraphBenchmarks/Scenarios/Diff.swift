// Scenario 9: diff. The changeset between two `[Int]` arrays, on five workloads (all seeded, so
// every run diffs the same arrays), four of distinct elements:
//
// - `diff N=10k 1% changed` and `diff N=100k 1% changed`: 0..<N, then 0.5% of it deleted and as
//   many new elements inserted at random places (the kit's test "A large diff with 1% changed
//   stays exact" builds the 10k arrays from the same seed);
// - `diff N=5k DK` and `diff N=100k DK`: DifferenceKit's published workloads: 5,000 elements with
//   1,000 deleted, 1,000 inserted and the first 200 of the target shuffled; 100,000 with 10,000
//   deleted, 10,000 inserted and the first 2,000 shuffled;
//
// and one of repeated elements, `diff N=10k over 3 values, 400 edits`: 10,000 elements drawn from
// 3 values, then 400 random deletes, inserts of one of the values and moves (about 500 deletes
// plus inserts in a shortest script: past the first Myers search's limit of 2√(N+M), where the
// linear matching of repeated elements reported 11,425 changes for 507).
//
// Unit: microseconds per diff. Implementations:
// - kit: `ArrayChangeset.diff(from:to:)` (the `Hashable` overload);
// - kit identifiedBy: `ArrayChangeset.diff(from:to:identifiedBy:)` with the element as identity
//   (so it also compares contents);
// - `difference(from:)` (the reference), and `.inferringMoves()` where it takes less than a
//   second.
//
// Applying the kit's changeset to the old array must give the new one; checked once, untimed.
// Every timed diff must report the workload's deletions and insertions (with repeated elements,
// as many changes as a shortest script, a move counting as a deletion and an insertion); the
// kit's move count is in the row's note (DifferenceKit reports 177 moves at 5k).

import ObserverGraph

enum Diff {
    static let family = ScenarioFamily(
        id: "diff",
        summary: "ArrayChangeset.diff vs difference(from:): 1% changed and DifferenceKit's workloads, µs",
        run: run)

    static let kit = "kit ArrayChangeset.diff"
    static let kitIdentified = "kit diff identifiedBy"
    static let standardLibrary = "difference(from:)"
    static let standardLibraryMoves = "difference(from:).inferringMoves()"

    struct Workload {
        let name: String
        let size: Int
        let deleted: Int
        let inserted: Int
        let shuffled: Int
        let seed: UInt64
        let withInferredMoves: Bool
        /// For repeated elements: the elements are drawn from this many values (0: distinct),
        /// and the new array is the old one after `edits` random deletes, inserts and moves.
        var values = 0
        var edits = 0

        var scenario: String { Diff.scenario(name) }

        /// The old and new arrays: deletes and inserts at random places, then the first
        /// `shuffled` elements of the new array shuffled; or, with `values`, repeated elements
        /// and `edits` mixed edits.
        func arrays() -> (old: [Int], new: [Int]) {
            var random = SeededGenerator(seed: seed)
            if values > 0 {
                let old = (0..<size).map { _ in Int.random(in: 0..<values, using: &random) }
                var new = old
                for _ in 0..<edits {
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: new.remove(at: Int.random(in: 0..<new.count, using: &random))
                    case 1:
                        let element = Int.random(in: 0..<values, using: &random)
                        new.insert(element, at: Int.random(in: 0...new.count, using: &random))
                    default:
                        let element = new.remove(at: Int.random(in: 0..<new.count, using: &random))
                        new.insert(element, at: Int.random(in: 0...new.count, using: &random))
                    }
                }
                return (old, new)
            }
            let old = Array(0..<size)
            var new = old
            for _ in 0..<deleted { new.remove(at: Int.random(in: 0..<new.count, using: &random)) }
            for i in 0..<inserted {
                new.insert(2 * size + i, at: Int.random(in: 0...new.count, using: &random))
            }
            new[0..<shuffled].shuffle(using: &random)
            return (old, new)
        }
    }

    static func scenario(_ name: String) -> String { "diff \(name)" }

    static let onePercent10k = "N=10k 1% changed"
    static let onePercent100k = "N=100k 1% changed"
    static let differenceKit5k = "N=5k DK (1k del, 1k ins, 200 shuffled)"
    static let differenceKit100k = "N=100k DK (10k del, 10k ins, 2k shuffled)"
    static let repeated10k = "N=10k over 3 values, 400 edits"

    static func workloads(_ plan: Plan) -> [Workload] {
        let small = [
            Workload(
                name: onePercent10k, size: plan.diffSize, deleted: plan.diffChanges,
                inserted: plan.diffChanges,
                shuffled: 0, seed: 99, withInferredMoves: true),
            Workload(
                name: differenceKit5k, size: 5_000, deleted: 1_000, inserted: 1_000, shuffled: 200, seed: 5,
                withInferredMoves: true),
            Workload(
                name: repeated10k, size: 10_000, deleted: 0, inserted: 0, shuffled: 0, seed: 7,
                withInferredMoves: true, values: 3, edits: 400),
        ]
        guard plan.diffSamples >= 5 else { return small }  // the smoke run
        return small + [
            Workload(
                name: onePercent100k, size: 100_000, deleted: 500, inserted: 500, shuffled: 0, seed: 100,
                withInferredMoves: false),
            Workload(
                name: differenceKit100k, size: 100_000, deleted: 10_000, inserted: 10_000, shuffled: 2_000,
                seed: 6, withInferredMoves: false),
        ]
    }

    static func run(plan: Plan, report: Report) {
        for workload in workloads(plan) { run(workload, plan: plan, report: report) }
    }

    static func run(_ workload: Workload, plan: Plan, report: Report) {
        progress(workload.scenario)
        let (old, new) = workload.arrays()

        // Once, untimed: the kit's changeset reproduces `new`, and the standard library's too.
        // Its deletes and inserts are the workload's; with repeated elements, they and its moves
        // (a delete and an insert each) are as many as a shortest script's (`difference(from:)`).
        let changeset = ArrayChangeset.diff(from: old, to: new)
        let moved = changeset.moves.count
        let changes = changeset.deletes.count + changeset.inserts.count
        let expected =
            workload.values > 0 ? new.difference(from: old).count : workload.deleted + workload.inserted
        verify(
            (workload.values > 0 ? changes + 2 * moved : changes) == expected && changeset.updates.isEmpty,
            "kit diff: \(changeset.deletes.count) deletes, \(changeset.inserts.count) inserts, "
                + "\(changeset.moves.count) moves, \(changeset.updates.count) updates; expected \(expected)")
        do {
            let rebuilt = try changeset.apply(to: old, newElements: new)
            verify(rebuilt == new, "kit diff: applying the changeset does not give the new array")
        } catch {
            verify(false, "kit diff: the changeset does not apply: \(error)")
        }

        // The arrays go through `opaque` on every diff, so no diff can be computed once and reused.
        // A diff slower than the sample budget runs once per sample.
        func timed(_ name: String, _ diff: @escaping ([Int], [Int]) -> Int) -> Contender {
            let oneDiff: (Int) -> UInt64 = { repetitions in
                var edits = 0
                let start = monotonicNanoseconds()
                for _ in 0..<repetitions { edits &+= diff(opaque(old), opaque(new)) }
                let elapsed = monotonicNanoseconds() - start
                verify(edits >= repetitions * expected, "\(name): \(edits) edits in \(repetitions) diffs")
                return elapsed
            }
            let repetitions = calibrateRepetitions(targetNanoseconds: plan.diffSampleNanoseconds, oneDiff)
            return Contender(name: name) { [Double(oneDiff(repetitions)) / Double(repetitions) / 1_000] }
        }

        var contenders = [
            timed(kit) { old, new in
                let changeset = ArrayChangeset.diff(from: old, to: new)
                blackHole(changeset)
                return changeset.deletes.count + changeset.inserts.count + 2 * changeset.moves.count
            },
            timed(kitIdentified) { old, new in
                let changeset = ArrayChangeset.diff(from: old, to: new, identifiedBy: { $0 })
                blackHole(changeset)
                return changeset.deletes.count + changeset.inserts.count + 2 * changeset.moves.count
            },
            timed(standardLibrary) { old, new in
                let difference = new.difference(from: old)
                blackHole(difference)
                return difference.removals.count + difference.insertions.count
            },
        ]
        if workload.withInferredMoves {
            contenders.append(
                timed(standardLibraryMoves) { old, new in
                    let difference = new.difference(from: old).inferringMoves()
                    blackHole(difference)
                    return difference.removals.count + difference.insertions.count
                })
        }
        let slow = workload.size >= 100_000 && !(workload.deleted < workload.size / 50)
        let stats = roundRobin(
            contenders, samples: slow ? min(plan.diffSamples, 3) : plan.diffSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: workload.scenario, implementation: contender.name, stats: result[0],
                unit: "µs/diff",
                reference: contender.name == standardLibrary,
                note: contender.name == kit ? "\(moved) moves" : nil)
        }
    }
}
