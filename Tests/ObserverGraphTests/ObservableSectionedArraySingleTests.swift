import ObserverGraph
import Testing

@Suite("Sectioned arrays: single mutations deliver what a batch of one would")
struct ObservableSectionedArraySingleTests {
    /// One random single operation, as the method and as a batch of one.
    struct Operation {
        let name: String
        let single: (ObservableSectionedArray<String, Int>) throws -> Void
        let batched: (inout SectionedBatch<String, Int>) throws -> Void
    }

    static func randomOperation(sections: [Section], _ random: inout SeededGenerator) -> Operation {
        // Indices one past either end too, so that refusals are compared as well.
        let section = Int.random(in: -1...sections.count, using: &random)
        let count = sections.indices.contains(section) ? sections[section].items.count : 0
        let path = ItemPath(section: section, item: Int.random(in: -1...count, using: &random))
        let value = Int.random(in: 0..<100, using: &random)
        let new = Section(metadata: "s\(value)", items: Array(0..<(value % 3)))
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            return Operation(
                name: "appendSection", single: { $0.appendSection(new) }, batched: { $0.appendSection(new) })
        case 1:
            return Operation(
                name: "insertSection at \(section)", single: { try $0.insertSection(new, at: section) },
                batched: { try $0.insertSection(new, at: section) })
        case 2:
            return Operation(
                name: "removeSection at \(section)", single: { try $0.removeSection(at: section) },
                batched: { _ = try $0.removeSection(at: section) })
        case 3:
            return Operation(
                name: "setMetadata at \(section)", single: { try $0.setMetadata("m\(value)", at: section) },
                batched: { try $0.setMetadata("m\(value)", at: section) })
        case 4:
            return Operation(
                name: "appendItem to \(section)", single: { try $0.appendItem(value, toSection: section) },
                batched: { try $0.appendItem(value, toSection: section) })
        case 5:
            return Operation(
                name: "insertItem at \(path)", single: { try $0.insertItem(value, at: path) },
                batched: { try $0.insertItem(value, at: path) })
        case 6:
            return Operation(
                name: "removeItem at \(path)", single: { try $0.removeItem(at: path) },
                batched: { _ = try $0.removeItem(at: path) })
        default:
            return Operation(
                name: "setItem at \(path)", single: { try $0.setItem(value, at: path) },
                batched: { try $0.setItem(value, at: path) })
        }
    }

    @Test("Random single operations: the same changesets, sections and refusals as a batch of one")
    func sameAsBatch() throws {
        for seed in UInt64(1)...UInt64(300) {
            var random = SeededGenerator(seed: seed)
            let start = (0..<Int.random(in: 0...3, using: &random)).map { index in
                Section(metadata: "s\(index)", items: Array(0..<Int.random(in: 0...3, using: &random)))
            }
            let single = ObservableSectionedArray(start)
            let batched = ObservableSectionedArray(start)
            let singleLog = GraphLock<[SectionedChangeset]>([])
            let batchedLog = GraphLock<[SectionedChangeset]>([])
            let mirror = SectionMirror()
            let tokens = [
                single.observeValuesNonisolated { change in singleLog.withLock { $0.append(change.changeset) }
                },
                single.observeValuesNonisolated(mirror.apply),
                batched.observeValuesNonisolated { change in
                    batchedLog.withLock { $0.append(change.changeset) }
                },
            ]
            for step in 0..<12 {
                let operation = Self.randomOperation(sections: single.sections, &random)
                var singleError: ObservableArrayError?
                var batchedError: ObservableArrayError?
                do { try operation.single(single) } catch { singleError = error as? ObservableArrayError }
                batched.batch { batch in
                    do { try operation.batched(&batch) } catch {
                        batchedError = error as? ObservableArrayError
                    }
                }
                let context = "seed \(seed), step \(step), \(operation.name)"
                #expect(singleError == batchedError, "\(context)")
                #expect(single.sections == batched.sections, "\(context)")
                #expect(singleLog.withLock { $0 } == batchedLog.withLock { $0 }, "\(context)")
            }
            #expect(mirror.problems == [], "seed \(seed)")
            #expect(mirror.mirror == single.sections, "seed \(seed)")
            withExtendedLifetime(tokens) {}
        }
    }

    @Test("Each single operation's changeset and refusal, exactly")
    func exactChangesets() throws {
        let table = ObservableSectionedArray<String, Int>([ArraySection(metadata: "a", items: [1, 2])])
        let log = GraphLock<[String]>([])
        let token = table.observeValuesNonisolated { change in
            log.withLock { $0.append("\(change.changeset)") }
        }
        #expect(table.appendSection(ArraySection(metadata: "b", items: [3])))
        try table.insertSection(ArraySection(metadata: "c", items: []), at: 0)
        try table.setMetadata("A", at: 1)
        try table.appendItem(4, toSection: 2)
        try table.insertItem(0, at: ItemPath(section: 1, item: 0))
        try table.setItem(20, at: ItemPath(section: 1, item: 2))
        try table.removeItem(at: ItemPath(section: 1, item: 1))
        try table.removeSection(at: 0)
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 3, count: 2)) {
            try table.insertItem(9, at: ItemPath(section: 0, item: 3))
        }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 2, count: 2)) {
            try table.appendItem(9, toSection: 2)
        }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: -1, count: 2)) {
            try table.insertSection(ArraySection(metadata: "x", items: []), at: -1)
        }
        #expect(
            log.withLock { $0 } == [
                "sections: inserts [0]", "sections: inserts [1]", "sections: inserts [0]",
                "sections: updates [1]", "items in 2: inserts [1]", "items in 1: inserts [0]",
                "items in 1: updates [2]", "items in 1: deletes [1]", "sections: deletes [0]",
            ])
        #expect(
            table.sections == [
                ArraySection(metadata: "A", items: [0, 20]), ArraySection(metadata: "b", items: [3, 4]),
            ])
        table.finish()
        #expect(throws: ObservableArrayError.terminated) { try table.appendItem(5, toSection: 0) }
        #expect(throws: ObservableArrayError.terminated) { try table.removeSection(at: 0) }
        // The moves go through a batch of their own, not the single operations: refused too.
        #expect(throws: ObservableArrayError.terminated) { try table.moveSection(from: 0, to: 1) }
        #expect(throws: ObservableArrayError.terminated) {
            try table.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))
        }
        #expect(table.sections.map(\.metadata) == ["A", "b"])
        #expect(!table.appendSection(ArraySection(metadata: "late", items: [])))
        // A batch after termination: its body runs once, on the final sections, and its changes
        // are dropped; it returns what that run returned.
        var runs = 0
        let seen = table.batch { batch -> Int in
            runs += 1
            batch.appendSection(ArraySection(metadata: "late", items: [1]))
            return batch.sections.count
        }
        #expect(runs == 1 && seen == 3)
        #expect(table.sections.map(\.metadata) == ["A", "b"])
        #expect(log.withLock { $0.count } == 9)  // nothing delivered after the termination
        withExtendedLifetime(token) {}
    }

    @Test(
        "A single operation inside a batch of the same array: applied once, its refusal the same on every run"
    )
    func nestedInBatch() throws {
        let table = ObservableSectionedArray<String, Int>([ArraySection(metadata: "a", items: [1])])
        let log = GraphLock<[String]>([])
        let token = table.observeValuesNonisolated { change in
            log.withLock { $0.append("\(change.changeset)") }
        }
        var refusals: [ObservableArrayError] = []
        table.batch { _ in
            do throws(ObservableArrayError) {
                try table.removeItem(at: ItemPath(section: 0, item: 5))
            } catch {
                refusals.append(error)
            }
            try? table.appendItem(2, toSection: 0)
        }
        #expect(!refusals.isEmpty)
        #expect(refusals.allSatisfy { $0 == .indexOutOfRange(index: 5, count: 1) })
        #expect(table.sections == [ArraySection(metadata: "a", items: [1, 2])])
        #expect(log.withLock { $0 } == ["sections: inserts [0]", "items in 0: inserts [1]"])
        withExtendedLifetime(token) {}
    }
}
