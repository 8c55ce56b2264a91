import Foundation
import Testing

// Every ```swift block of README.md and of the DocC articles is compiled and run by a test.
//
// The rule this test enforces, so that a block cannot drift from its test:
// - A block is split into paragraphs at blank lines. Its paragraphs must all appear, in order,
//   in ONE Swift file under Tests/ that contains tests, each paragraph as a run of consecutive
//   lines (blank lines in the test file do not count). Lines compare with surrounding white
//   space removed and inner runs of white space as one space, so a test may indent a block
//   (nest its types in the suite, its statements in a test function) and put expectations
//   between its paragraphs.
// - A block that cannot run (the dependency lines of a package manifest) is marked, on the line
//   before it, with `<!-- doc-snippet: manifest -->`; the marker is invisible in the rendered
//   page. Its lines must be `.package(...)` or `.product(...)` entries (or comments);
//   `.ci/docs` checks them with `swift package dump-package` in a temporary package.

/// A fenced ```swift block of a document.
struct DocBlock: CustomStringConvertible {
    let document: String
    let line: Int
    let kind: String?
    let lines: [String]

    var description: String { "\(document):\(line)" }

    /// The block's paragraphs, normalized.
    var paragraphs: [[String]] {
        var result: [[String]] = [[]]
        for line in lines {
            let normalized = DocSnippets.normalize(line)
            if normalized.isEmpty {
                if !(result.last ?? []).isEmpty { result.append([]) }
            } else {
                result[result.count - 1].append(normalized)
            }
        }
        return result.filter { !$0.isEmpty }
    }
}

enum DocSnippets {
    /// The repository's root folder, found from this file's path.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The documents whose Swift blocks must be tested: README.md and every article.
    static let documents = [
        "README.md",
        "Sources/ObserverGraph/ObserverGraph.docc/ObserverGraph.md",
        "Sources/ObserverGraph/ObserverGraph.docc/GettingStarted.md",
        "Sources/ObserverGraph/ObserverGraph.docc/ValuesAndEvents.md",
        "Sources/ObserverGraph/ObserverGraph.docc/ObservableArrays.md",
        "Sources/ObserverGraph/ObserverGraph.docc/SwiftConcurrency.md",
        "Sources/ObserverGraph/ObserverGraph.docc/GuaranteesAndReentrancy.md",
        "Sources/ObserverGraph/ObserverGraph.docc/SeeingTheGraph.md",
        "Sources/ObserverGraph/ObserverGraph.docc/MigratingFromRVSGeneralObserver.md",
        "Sources/ObserverGraph/ObserverGraph.docc/ComingFromCombineOrRxSwift.md",
        "Sources/ObserverGraphTesting/ObserverGraphTesting.docc/ObserverGraphTesting.md",
        "Sources/ObserverGraphTesting/ObserverGraphTesting.docc/TestingWithMarbleDiagrams.md",
    ]

    static let knownKinds: Set<String> = ["manifest"]

    /// Trims a line and turns each run of white space inside it into one space.
    static func normalize(_ line: String) -> String {
        line.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The ```swift blocks of a Markdown document, with the marker on the line before each.
    static func swiftBlocks(of document: String) throws -> [DocBlock] {
        let lines = try read(document).components(separatedBy: "\n")
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            let fence = trimmed.prefix { $0 == "`" }
            guard fence.count >= 3 else {
                index += 1
                continue
            }
            let info = trimmed.dropFirst(fence.count).split(separator: " ").first.map(String.init)
            let start = index
            var body: [String] = []
            index += 1
            while index < lines.count {
                let closing = lines[index].trimmingCharacters(in: .whitespaces)
                if closing.count >= fence.count && closing.allSatisfy({ $0 == "`" }) { break }
                body.append(lines[index])
                index += 1
            }
            index += 1
            guard info == "swift" else { continue }
            let previous = lines[..<start].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            blocks.append(
                DocBlock(document: document, line: start + 1, kind: marker(previous), lines: body))
        }
        return blocks
    }

    /// The kind in `<!-- doc-snippet: KIND -->`, or `nil`.
    static func marker(_ line: String?) -> String? {
        guard let line = line?.trimmingCharacters(in: .whitespaces),
            line.hasPrefix("<!-- doc-snippet:"), line.hasSuffix("-->")
        else { return nil }
        return line.dropFirst("<!-- doc-snippet:".count).dropLast("-->".count)
            .trimmingCharacters(in: .whitespaces)
    }

    /// Every Swift file under Tests/ that contains tests, as normalized non-blank lines.
    static let testFiles: [(path: String, lines: [String])] = {
        let tests = root.appendingPathComponent("Tests")
        guard let walker = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)
        else { return [] }
        var files: [(path: String, lines: [String])] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            guard url.lastPathComponent != "DocSnippetTests.swift",
                let text = try? String(contentsOf: url, encoding: .utf8), text.contains("@Test")
            else { continue }
            let lines = text.components(separatedBy: "\n").map(normalize).filter { !$0.isEmpty }
            files.append((String(url.path.dropFirst(root.path.count + 1)), lines))
        }
        return files.sorted { $0.path < $1.path }
    }()

    /// Where `paragraph` starts in `lines` at or after `from`, as a run of consecutive lines.
    static func find(_ paragraph: [String], in lines: [String], from: Int) -> Int? {
        guard !paragraph.isEmpty, lines.count >= paragraph.count else { return nil }
        var start = from
        while start + paragraph.count <= lines.count {
            if lines[start..<start + paragraph.count].elementsEqual(paragraph) { return start }
            start += 1
        }
        return nil
    }

    /// The test file holding all of `block`'s paragraphs in order, or `nil`.
    static func testFile(for block: DocBlock) -> String? {
        let paragraphs = block.paragraphs
        guard !paragraphs.isEmpty else { return nil }
        for file in testFiles {
            var position = 0
            var found = true
            for paragraph in paragraphs {
                guard let start = find(paragraph, in: file.lines, from: position) else {
                    found = false
                    break
                }
                position = start + paragraph.count
            }
            if found { return file.path }
        }
        return nil
    }

    /// The first paragraph of `block` that no test file contains, for the failure message.
    static func missingParagraph(of block: DocBlock) -> [String]? {
        block.paragraphs.first { paragraph in
            !testFiles.contains { find(paragraph, in: $0.lines, from: 0) != nil }
        }
    }
}

@Suite("Docs: every Swift block of README.md and the articles is compiled and run by a test")
struct DocSnippetTests {
    @Test("The list of documents is every article of both catalogs, plus README.md")
    func documentListIsComplete() throws {
        var found: [String] = ["README.md"]
        for catalog in [
            "Sources/ObserverGraph/ObserverGraph.docc",
            "Sources/ObserverGraphTesting/ObserverGraphTesting.docc",
        ] {
            let names = try FileManager.default.contentsOfDirectory(
                atPath: DocSnippets.root.appendingPathComponent(catalog).path)
            found += names.filter { $0.hasSuffix(".md") }.map { "\(catalog)/\($0)" }
        }
        #expect(Set(found) == Set(DocSnippets.documents))
        #expect(DocSnippets.testFiles.count > 10, "the test files were not found")
    }

    @Test(
        "Each runnable block appears verbatim in a test; each marked block is well formed",
        arguments: DocSnippets.documents)
    func blocksAreTested(document: String) throws {
        let blocks = try DocSnippets.swiftBlocks(of: document)
        for block in blocks {
            switch block.kind {
            case nil:
                let file = DocSnippets.testFile(for: block)
                let missing = DocSnippets.missingParagraph(of: block)?.joined(separator: "\n") ?? "-"
                #expect(
                    file != nil,
                    """
                    \(block): no test file under Tests/ holds this block's paragraphs, in order, \
                    verbatim (modulo white space). The first paragraph found nowhere:
                    \(missing)
                    """)
            case let kind?:
                #expect(DocSnippets.knownKinds.contains(kind), "\(block): unknown doc-snippet kind \(kind)")
                let entries = block.lines.map(DocSnippets.normalize)
                    .filter { !$0.isEmpty && !$0.hasPrefix("//") }
                #expect(!entries.isEmpty, "\(block): an empty manifest block")
                for entry in entries where !(entry.hasPrefix(".package(") || entry.hasPrefix(".product(")) {
                    Issue.record("\(block): a manifest block holds only .package/.product lines: \(entry)")
                }
            }
        }
    }

    @Test("The checker finds the blocks: a known block is found, a changed one is not")
    func checkerWorks() throws {
        let blocks = try DocSnippets.documents.flatMap(DocSnippets.swiftBlocks(of:))
        #expect(blocks.count >= 20)
        let block = try #require(
            blocks.first { $0.kind == nil && $0.document.hasSuffix("GettingStarted.md") })
        #expect(DocSnippets.testFile(for: block) != nil)
        let changed = DocBlock(
            document: block.document, line: block.line, kind: nil,
            lines: block.lines + ["let thisLineIsInNoTest = 1"])
        #expect(DocSnippets.testFile(for: changed) == nil)
    }
}
