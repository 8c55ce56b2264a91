import Foundation
import Testing

/// The promise tables of the article "Guarantees and reentrancy" (Guarantees, Reentrancy policy)
/// name the tests that prove each promise. This keeps them honest: every row names at least one proof, and every test it names
/// exists, in the file it names.
@Suite("Docs: the promise tables name tests that exist")
struct PromiseTableTests {
    /// The repository's root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The article that holds the tables.
    static let article = "Sources/ObserverGraph/ObserverGraph.docc/GuaranteesAndReentrancy.md"

    /// The rows of the tables under `### Guarantees` and `### Reentrancy policy`: (promise, proof).
    static func rows() throws -> [(promise: String, proof: String)] {
        let text = try String(contentsOf: root.appendingPathComponent(article), encoding: .utf8)
        var rows: [(String, String)] = []
        var inSection = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { inSection = line == "### Guarantees" || line == "### Reentrancy policy" }
            guard inSection, line.hasPrefix("| "), !line.hasPrefix("| ---") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, cells[0] != "promise", cells[0] != "rule" else {
                continue
            }
            rows.append((cells[0], cells[1]))
        }
        return rows
    }

    /// Each `name` in backticks followed, in the same group, by `(File.swift)` or a `Fuzz/` path.
    static func citations(in proof: String) -> [(name: String, file: String)] {
        var result: [(String, String)] = []
        for group in proof.split(separator: ";") {
            guard let open = group.lastIndex(of: "("), let close = group.lastIndex(of: ")"), open < close
            else {
                for name in backticked(String(group)) where name.hasPrefix("Fuzz/") {
                    result.append((name, name))
                }
                continue
            }
            let file = String(group[group.index(after: open)..<close])
            guard file.hasSuffix(".swift") else { continue }
            for name in backticked(String(group[..<open])) { result.append((name, file)) }
        }
        return result
    }

    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("Every promise row names at least one test, and every named test exists in its file")
    func namedTestsExist() throws {
        let rows = try Self.rows()
        #expect(rows.count >= 20, "the tables were not found")
        for row in rows {
            let cited = Self.citations(in: row.proof)
            #expect(!cited.isEmpty || row.proof.contains("the compiler"), "no test named for: \(row.promise)")
            for (name, file) in cited {
                if name.hasPrefix("Fuzz/") {
                    #expect(
                        FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(name).path))
                    continue
                }
                let path = file.contains("/") ? file : "Tests/ObserverGraphTests/" + file
                let source = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
                let found = source.contains("func \(name)(")
                #expect(found, "\(name) is not in \(path)")
            }
        }
    }
}
