import ObserverGraph
import Testing

typealias Section = ArraySection<String, Int>

/// Applies every delivered sectioned changeset to a mirror and reports mismatches.
final class SectionMirror: Sendable {
    private let state = GraphLock<(mirror: [Section], events: Int, problems: [String])>(([], 0, []))

    @Sendable func apply(_ change: SectionedArrayChange<String, Int>) {
        state.withLock { state in
            state.events += 1
            do {
                let rebuilt = try change.changeset.apply(to: state.mirror, newSections: change.sections)
                if rebuilt != change.sections {
                    state.problems.append(
                        "\(change.changeset) rebuilt \(rebuilt), expected \(change.sections)")
                }
            } catch {
                state.problems.append("\(error) applying \(change.changeset)")
            }
            state.mirror = change.sections
        }
    }

    var mirror: [Section] { state.withLock { $0.mirror } }
    var problems: [String] { state.withLock { $0.problems } }
    var events: Int { state.withLock { $0.events } }
}

@Suite("Sectioned arrays")
struct ObservableSectionedArrayTests {
    @Test("Cities and countries: item and section changes with their indices")
    func sourceDocumentExample() throws {
        let table = ObservableSectionedArray<String, String>([
            ArraySection(metadata: "Cities", items: ["Paris", "Berlin"])
        ])
        let log = GraphLock<[SectionedChangeset]>([])
        let token = table.observeValuesNonisolated { change in log.withLock { $0.append(change.changeset) } }
        try table.appendItem("Copenhagen", toSection: 0)
        table.appendSection(ArraySection(metadata: "Countries", items: ["France", "Croatia"]))
        try table.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))
        try table.setMetadata("Big cities", at: 0)
        try table.moveSection(from: 1, to: 0)
        try table.removeItem(at: ItemPath(section: 1, item: 0))
        let descriptions = log.withLock { $0 }.map(\.description)
        #expect(
            descriptions == [
                "sections: inserts [0]",
                "items in 0: inserts [2]",
                "sections: inserts [1]",
                "items in 0: deletes [0]; items in 1: inserts [0]",
                "sections: updates [0]",
                "sections: moves 1→0",
                "items in 1: deletes [0]",
            ])
        #expect(table.sections.map(\.metadata) == ["Countries", "Big cities"])
        #expect(table.sections.map(\.items) == [["Paris", "France", "Croatia"], ["Copenhagen"]])
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 5, count: 2)) {
            try table.removeSection(at: 5)
        }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 1, count: 1)) {
            try table.setItem("X", at: ItemPath(section: 1, item: 1))
        }
        #expect(log.withLock { $0 }.count == 7)
        withExtendedLifetime(token) {}
    }

    @Test("Random section and item operations, single and batched: every changeset reproduces the sections")
    func randomOperations() {
        for seed in UInt64(1)...UInt64(800) {
            var random = SeededGenerator(seed: seed)
            func randomSection() -> Section {
                Section(
                    metadata: ["a", "b", "c"].randomElement(using: &random)!,
                    items: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                        Int.random(in: 0..<5, using: &random)
                    })
            }
            let table = ObservableSectionedArray<String, Int>(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in randomSection() })
            let mirror = SectionMirror()
            let token = table.observeValuesNonisolated(mirror.apply)
            func randomStep(_ batch: inout SectionedBatch<String, Int>) {
                let sections = batch.sections.count
                func path(extra: Int = 0) -> ItemPath? {
                    guard sections > 0 else { return nil }
                    let section = Int.random(in: 0..<sections, using: &random)
                    let count = batch.sections[section].items.count + extra
                    guard count > 0 else { return nil }
                    return ItemPath(section: section, item: Int.random(in: 0..<count, using: &random))
                }
                switch Int.random(in: 0..<9, using: &random) {
                case 0: batch.appendSection(randomSection())
                case 1:
                    try? batch.insertSection(
                        randomSection(), at: Int.random(in: 0...sections, using: &random))
                case 2:
                    if sections > 0 {
                        _ = try? batch.removeSection(at: Int.random(in: 0..<sections, using: &random))
                    }
                case 3:
                    if sections > 0 {
                        try? batch.moveSection(
                            from: Int.random(in: 0..<sections, using: &random),
                            to: Int.random(in: 0..<sections, using: &random))
                    }
                case 4:
                    if sections > 0 {
                        try? batch.setMetadata("m", at: Int.random(in: 0..<sections, using: &random))
                    }
                case 5: if let at = path(extra: 1) { try? batch.insertItem(9, at: at) }
                case 6: if let at = path() { _ = try? batch.removeItem(at: at) }
                case 7:
                    if let at = path() { try? batch.setItem(Int.random(in: 0..<5, using: &random), at: at) }
                default:
                    if let from = path(), let to = path(extra: 1) {
                        try? batch.moveItem(from: from, to: to)
                    }
                }
            }
            for _ in 0..<15 {
                let steps = Int.random(in: 1...4, using: &random)
                table.batch { batch in
                    for _ in 0..<steps { randomStep(&batch) }
                }
            }
            #expect(mirror.problems.isEmpty, "seed \(seed): \(mirror.problems.prefix(2))")
            #expect(mirror.mirror == table.sections, "seed \(seed)")
            withExtendedLifetime(token) {}
            if !mirror.problems.isEmpty { break }
        }
    }
}
