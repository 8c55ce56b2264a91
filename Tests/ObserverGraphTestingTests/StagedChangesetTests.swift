import ObserverGraph
import ObserverGraphTesting
import Testing

/// A row with an identity and a content.
private struct TestRow: Equatable, Sendable, CustomStringConvertible {
    let id: Int
    var title: Int
    var description: String { "\(id):\(title)" }
}

/// A seeded generator (SplitMix64).
private struct Xorshift: RandomNumberGenerator {
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

/// Random rows: ids drawn from a small pool (distinct unless `duplicates`), random contents.
private func randomRows(_ random: inout Xorshift, pool: Int, duplicates: Bool = false) -> [TestRow] {
    let count = Int.random(in: 0...pool, using: &random)
    let ids =
        duplicates
        ? (0..<count).map { _ in Int.random(in: 0..<pool, using: &random) }
        : Array((0..<pool).shuffled(using: &random).prefix(count))
    return ids.map { TestRow(id: $0, title: Int.random(in: 0..<3, using: &random)) }
}

@Suite("Staged changesets and the batch-update validator")
struct StagedChangesetTests {
    @Test("10,000 random old/new pairs: every stage is a valid batch and the stages end at the target")
    func randomPairsValidate() throws {
        var random = Xorshift(seed: 14)
        var stageCounts = [0, 0, 0]
        for trial in 0..<10_000 {
            let pool = Int.random(in: 1...24, using: &random)
            let duplicates = trial % 10 == 9
            let old = randomRows(&random, pool: pool, duplicates: duplicates)
            var new = randomRows(&random, pool: pool, duplicates: duplicates)
            if trial % 3 == 0 {  // mostly the same rows: few changes, some moved and changed
                new = old.map {
                    Int.random(in: 0..<4, using: &random) == 0 ? TestRow(id: $0.id, title: 9) : $0
                }
                if new.count > 1 { new.swapAt(0, Int.random(in: 0..<new.count, using: &random)) }
            }
            let staged = StagedChangeset(from: old, to: new, identifiedBy: \.id)
            do {
                try BatchUpdateValidator.validate(staged, from: old, to: new)
            } catch {
                Issue.record(
                    "trial \(trial): \(error) for \(old) → \(new): \(staged.stages.map(\.changeset))")
                return
            }
            stageCounts[staged.stages.count] += 1
        }
        // Every shape occurs: nothing to do, one stage, and a move stage followed by reloads.
        #expect(stageCounts.allSatisfy { $0 > 100 }, "\(stageCounts)")
    }

    @Test("A changed and moved row is moved, then reloaded at its new index; never deleted and inserted")
    func changedAndMoved() throws {
        let old = [TestRow(id: 1, title: 0), TestRow(id: 2, title: 0), TestRow(id: 3, title: 0)]
        let new = [TestRow(id: 3, title: 5), TestRow(id: 1, title: 0), TestRow(id: 2, title: 7)]
        let staged = StagedChangeset(from: old, to: new, identifiedBy: \.id)
        #expect(
            staged.stages.map(\.changeset) == [
                ArrayChangeset(moves: [.init(from: 2, to: 0)]), ArrayChangeset(updates: [0, 2]),
            ])
        #expect(
            staged.stages[0].array == [
                TestRow(id: 3, title: 0), TestRow(id: 1, title: 0), TestRow(id: 2, title: 0),
            ])
        try BatchUpdateValidator.validate(staged, from: old, to: new)
        // Without moves, the reloads go in the one stage, in old indices.
        let inPlace = StagedChangeset(
            from: old, to: [TestRow(id: 2, title: 4), TestRow(id: 3, title: 0)], identifiedBy: \.id)
        #expect(inPlace.stages.map(\.changeset) == [ArrayChangeset(deletes: [0], updates: [1])])
    }

    @Test("Observed batches with moves and updates split into valid stages")
    func observedChanges() throws {
        var random = Xorshift(seed: 3)
        for trial in 0..<2_000 {
            let old = (0..<Int.random(in: 1...12, using: &random)).map { _ in
                Int.random(in: 0..<5, using: &random)
            }
            let array = ObservableArray(old)
            let seen = GraphLock<[ArrayChange<Int>]>([])
            let token = array.observeValuesNonisolated { change in seen.withLock { $0.append(change) } }
            array.batch { batch in
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let count = batch.count
                    try? batch.move(
                        from: Int.random(in: 0..<count, using: &random),
                        to: Int.random(in: 0..<count, using: &random))
                    let k = Int.random(in: 0..<count, using: &random)
                    try? batch.set(batch.elements[k] + 10, at: k)
                }
            }
            withExtendedLifetime(token) {}
            let changes = seen.withLock { $0 }
            #expect(changes.count == 2)
            guard let change = changes.last else { continue }
            let staged = StagedChangeset(change.changeset, from: old, to: change.array)
            do {
                try BatchUpdateValidator.validate(staged, from: old, to: change.array)
            } catch {
                Issue.record("trial \(trial): \(error) for \(change.changeset)")
                return
            }
        }
    }

    @Test(
        "A delivered changeset paired with arrays it cannot turn into each other is staged as a full reload")
    func mismatchedChangesetReloads() throws {
        let shown = [7, 8, 9]
        let new = [1, 2, 3]
        let cases: [ArrayChangeset] = [
            ArrayChangeset(inserts: [0, 1, 2]),  // the first delivery, staged against a filled table
            ArrayChangeset(deletes: [5]),  // out of range
            ArrayChangeset(updates: [4], moves: [.init(from: 0, to: 2)]),  // out of range, split in two
            ArrayChangeset(),  // nothing, but the arrays differ in count below
        ]
        for changeset in cases.dropLast() {
            let staged = StagedChangeset(changeset, from: shown, to: new)
            #expect(
                staged.stages == [ArrayChange(array: new, changeset: .reload(oldCount: 3, newCount: 3))],
                "\(changeset)")
            try BatchUpdateValidator.validate(staged, from: shown, to: new)
        }
        let shorter = StagedChangeset(ArrayChangeset(), from: shown, to: [1])
        #expect(shorter.stages == [ArrayChange(array: [1], changeset: .reload(oldCount: 3, newCount: 1))])
        #expect(StagedChangeset(ArrayChangeset(), from: [Int](), to: []).isEmpty)
        // A changeset that fits is staged as before.
        let fits = StagedChangeset(ArrayChangeset(deletes: [0], inserts: [2]), from: shown, to: [8, 9, 1])
        #expect(
            fits.stages == [
                ArrayChange(array: [8, 9, 1], changeset: ArrayChangeset(deletes: [0], inserts: [2]))
            ])
    }

    @Test("Deletes and reloads with no move make one stage, the changeset as it is")
    func noMoveOneStage() {
        let staged = StagedChangeset(ArrayChangeset(deletes: [0], updates: [1]), from: ["a", "b"], to: ["B"])
        #expect(
            staged.stages == [
                ArrayChange(array: ["B"], changeset: ArrayChangeset(deletes: [0], updates: [1]))
            ])
    }

    @Test("The validator rejects each broken rule")
    func validatorRejects() {
        func rule(_ changeset: ArrayChangeset, _ old: Int, _ new: Int) -> BatchUpdateViolation.Rule? {
            do {
                try BatchUpdateValidator.validate(changeset, oldCount: old, newCount: new)
                return nil
            } catch { return error.rule }
        }
        #expect(rule(ArrayChangeset(deletes: [0], updates: [0]), 2, 1) == .oldIndexUsedTwice)
        #expect(
            rule(ArrayChangeset(deletes: [1], moves: [.init(from: 1, to: 0)]), 2, 1) == .oldIndexUsedTwice)
        #expect(
            rule(ArrayChangeset(inserts: [0], moves: [.init(from: 1, to: 0)]), 2, 3) == .newIndexUsedTwice)
        #expect(rule(ArrayChangeset(deletes: [2]), 2, 1) == .indexOutOfRange)
        #expect(rule(ArrayChangeset(inserts: [3]), 2, 3) == .indexOutOfRange)
        #expect(rule(ArrayChangeset(deletes: [0]), 2, 2) == .countMismatch)
        #expect(rule(ArrayChangeset(updates: [0], moves: [.init(from: 1, to: 0)]), 2, 2) == .reloadWithMove)
        #expect(rule(ArrayChangeset(moves: [.init(from: 1, to: 0)]), 2, 2) == nil)
        #expect(rule(ArrayChangeset(), -1, -1) == .countMismatch)  // no view has -1 items
        #expect(rule(ArrayChangeset(), 0, 0) == nil)
        // A changed survivor that is not reloaded leaves stale content on screen.
        let stale = StagedChangeset(stages: [ArrayChange(array: [1, 5], changeset: ArrayChangeset())])
        #expect(
            throws: BatchUpdateViolation(stage: 0, rule: .staleContent, detail: "item 1 shows an old value")
        ) {
            try BatchUpdateValidator.validate(stale, from: [1, 2], to: [1, 5])
        }
        let short = StagedChangeset<Int>(stages: [])
        #expect(throws: BatchUpdateViolation.self) {
            try BatchUpdateValidator.validate(short, from: [1], to: [2])
        }
    }
}
