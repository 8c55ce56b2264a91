import ObserverGraph
import Testing

@Suite("Sectioned changesets: item changes by section")
struct SectionedChangesetItemsTests {
    /// The changeset of each change of `table` made by `change` (not the current value's, which
    /// an observer receives first).
    static func changesets(
        of table: ObservableSectionedArray<String, Int>,
        _ change: (ObservableSectionedArray<String, Int>) throws -> Void
    ) rethrows -> [SectionedChangeset] {
        let log = GraphLock<[SectionedChangeset]>([])
        let token = table.observeValuesNonisolated { change in log.withLock { $0.append(change.changeset) } }
        try change(table)
        token.cancel()
        return Array(log.withLock { $0 }.dropFirst())
    }

    static func threeSections() -> ObservableSectionedArray<String, Int> {
        ObservableSectionedArray([
            Section(metadata: "a", items: [1, 2]), Section(metadata: "b", items: []),
            Section(metadata: "c", items: [3]),
        ])
    }

    /// The pairs of `changes`, in its order.
    static func pairs(_ changes: SectionItemChanges) -> [String] {
        changes.map { "\($0.key): \($0.value)" }
    }

    @Test("No section, one and several: pairs in section order, lookups by section, keys and values")
    func noneOneSeveral() throws {
        let table = Self.threeSections()
        let changesets = try Self.changesets(of: table) { table in
            try table.setMetadata("A", at: 0)
            try table.appendItem(4, toSection: 1)
            try table.batch { batch in
                _ = try batch.removeItem(at: ItemPath(section: 2, item: 0))
                try batch.insertItem(5, at: ItemPath(section: 0, item: 0))
                try batch.appendItem(6, toSection: 1)
            }
        }
        #expect(changesets.count == 3)
        let (none, one, several) = (
            changesets[0].itemChanges, changesets[1].itemChanges, changesets[2].itemChanges
        )

        #expect(none.isEmpty && none.count == 0 && none.startIndex == none.endIndex)
        #expect(Array(none.keys).isEmpty && Array(none.values).isEmpty)
        #expect((-1...3).allSatisfy { none[$0] == nil })
        #expect(none.description == "[:]")
        #expect(changesets[0].description == "sections: updates [0]")

        #expect(!one.isEmpty && one.count == 1)
        #expect(Self.pairs(one) == ["1: inserts [0]"])
        #expect(Array(one.keys) == [1] && Array(one.values) == [ArrayChangeset(inserts: [0])])
        #expect(one[1] == ArrayChangeset(inserts: [0]) && one[0] == nil && one[2] == nil)
        #expect(changesets[1].description == "items in 1: inserts [0]")

        #expect(several.count == 3)
        #expect(Self.pairs(several) == ["0: inserts [0]", "1: inserts [1]", "2: deletes [0]"])
        #expect(
            several == [
                2: ArrayChangeset(deletes: [0]), 1: ArrayChangeset(inserts: [1]),
                0: ArrayChangeset(inserts: [0]),
            ])
        #expect(Array(several.keys) == [0, 1, 2])
        #expect(several[0] == ArrayChangeset(inserts: [0]) && several[2] == ArrayChangeset(deletes: [0]))
        #expect(several[-1] == nil && several[3] == nil)
        #expect(several.last?.key == 2 && several[several.index(before: several.endIndex)].key == 2)
        #expect(several.description == "[0: inserts [0], 1: inserts [1], 2: deletes [0]]")
        #expect(
            changesets[2].description
                == "items in 0: inserts [0]; items in 1: inserts [1]; items in 2: deletes [0]")
        #expect(table.sections.map(\.items) == [[5, 1, 2], [4, 6], []])
    }

    @Test("Equal and equally hashed however they were made; empty changes are left out")
    func equalityIgnoresHowItWasMade() throws {
        let table = Self.threeSections()
        let appended = try Self.changesets(of: table) { try $0.appendItem(7, toSection: 2) }
        let batched = try Self.changesets(of: table) { table in
            try table.batch { batch in
                try batch.appendItem(8, toSection: 2)
                try batch.appendItem(9, toSection: 0)
                _ = try batch.removeItem(at: ItemPath(section: 0, item: 2))  // the 9: no change left in 0
            }
        }
        #expect(appended == [SectionedChangeset(itemChanges: [2: ArrayChangeset(inserts: [1])])])
        #expect(batched == [SectionedChangeset(itemChanges: [2: ArrayChangeset(inserts: [2])])])

        let literal: SectionItemChanges = [2: ArrayChangeset(inserts: [1])]
        let withEmpty: SectionItemChanges = [0: ArrayChangeset(), 2: ArrayChangeset(inserts: [1])]
        let fromDictionary = SectionItemChanges([2: ArrayChangeset(inserts: [1]), 5: ArrayChangeset()])
        let replaced: SectionItemChanges = [2: ArrayChangeset(deletes: [0]), 2: ArrayChangeset(inserts: [1])]
        let emptiedLater: SectionItemChanges = [
            2: ArrayChangeset(inserts: [1]), 1: ArrayChangeset(inserts: [0]), 1: ArrayChangeset(),
        ]
        let replacedTwice: SectionItemChanges = [
            4: ArrayChangeset(inserts: [0]), 2: ArrayChangeset(deletes: [3]), 4: ArrayChangeset(),
            2: ArrayChangeset(inserts: [1]),
        ]
        #expect(
            Set([
                appended[0].itemChanges, literal, withEmpty, fromDictionary, replaced, emptiedLater,
                replacedTwice,
            ])
            .count == 1)
        #expect(withEmpty.count == 1 && Array(fromDictionary.keys) == [2])
        #expect(literal.hashValue == withEmpty.hashValue)

        let two: SectionItemChanges = [2: ArrayChangeset(inserts: [1]), 0: ArrayChangeset(deletes: [0])]
        let twoAgain = SectionItemChanges([0: ArrayChangeset(deletes: [0]), 2: ArrayChangeset(inserts: [1])])
        #expect(two == twoAgain && two.hashValue == twoAgain.hashValue)
        #expect(Set([literal, two, [0: ArrayChangeset(deletes: [0])] as SectionItemChanges]).count == 3)
        #expect(SectionItemChanges([0: ArrayChangeset(), 1: ArrayChangeset()]) == SectionItemChanges())
        #expect(SectionedChangeset(itemChanges: [0: ArrayChangeset(), 1: ArrayChangeset()]).isEmpty)
        #expect(!SectionedChangeset(itemChanges: literal).isEmpty)
    }

    @Test("Random sets of sections: every lookup, the order and the count match a dictionary")
    func randomLookups() {
        for seed in UInt64(1)...UInt64(100) {
            var random = SeededGenerator(seed: seed)
            var dictionary: [Int: ArrayChangeset] = [:]
            for section in 0..<Int.random(in: 0...40, using: &random) where Bool.random(using: &random) {
                dictionary[section] =
                    Int.random(in: 0..<4, using: &random) == 0
                    ? ArrayChangeset() : ArrayChangeset(inserts: [section])
            }
            let changes = SectionItemChanges(dictionary)
            let nonEmpty = dictionary.filter { !$0.value.isEmpty }
            #expect(changes.count == nonEmpty.count, "seed \(seed)")
            #expect(Array(changes.keys) == nonEmpty.keys.sorted(), "seed \(seed)")
            #expect((-2...42).allSatisfy { changes[$0] == nonEmpty[$0] }, "seed \(seed)")
            #expect(changes.allSatisfy { nonEmpty[$0.key] == $0.value }, "seed \(seed)")
            #expect(changes.dictionary == nonEmpty, "seed \(seed)")
        }
    }

    @Test("The deprecated spelling still reads and builds the same changes")
    func deprecatedSpelling() {
        check(DeprecatedSpelling.self)
    }

    func check<Spelling: ItemsSpelling>(_ spelling: Spelling.Type) {
        let changeset = Spelling.changeset([3: ArrayChangeset(inserts: [0]), 1: ArrayChangeset()])
        #expect(changeset.itemChanges == [3: ArrayChangeset(inserts: [0])])
        #expect(Spelling.items(of: changeset) == [3: ArrayChangeset(inserts: [0])])
        #expect(Spelling.items(of: SectionedChangeset()) == [:])
    }
}

/// Builds a changeset from a dictionary and reads it back as one.
protocol ItemsSpelling {
    static func changeset(_ items: [Int: ArrayChangeset]) -> SectionedChangeset
    static func items(of changeset: SectionedChangeset) -> [Int: ArrayChangeset]
}

/// Calls of the deprecated spelling, from declarations deprecated themselves (so that they
/// compile without a warning), reached through `ItemsSpelling`.
enum DeprecatedSpelling: ItemsSpelling {
    @available(*, deprecated)
    static func changeset(_ items: [Int: ArrayChangeset]) -> SectionedChangeset {
        SectionedChangeset(sections: ArrayChangeset(), items: items)
    }

    @available(*, deprecated)
    static func items(of changeset: SectionedChangeset) -> [Int: ArrayChangeset] { changeset.items }
}
