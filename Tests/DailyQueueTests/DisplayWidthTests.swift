import DailyQueue
import Foundation
import Testing

@Suite("DailyQueue: display width and the list table")
struct DisplayWidthTests {
    @Test(
        "Columns per grapheme cluster: wide CJK and emoji 2, combining marks 0",
        arguments: [
            ("a", 1), ("é", 1), ("e\u{301}", 1), ("\u{301}", 0), ("東", 2), ("タ", 2), ("ｶ", 1), ("Ａ", 2),
            ("한", 2), ("\u{3000}", 2), ("😀", 2), ("🍎", 2), ("👩\u{200D}💻", 2),
            ("👨\u{200D}👩\u{200D}👧", 2), ("🇯🇵", 2), ("👍🏽", 2), ("❤\u{FE0F}", 2), ("❤", 1), ("☺", 1),
            ("1\u{FE0F}\u{20E3}", 2), ("→", 1), ("\u{200B}", 0), ("\t", 0), ("𠀋", 2),
        ] as [(Character, Int)])
    func character(_ character: Character, columns: Int) {
        #expect(DisplayWidth.columns(character) == columns, "\(character.unicodeScalars.map(\.value))")
    }

    @Test("Strings add up their clusters")
    func strings() {
        #expect(DisplayWidth.columns("") == 0)
        #expect(DisplayWidth.columns("Laundry") == 7)
        #expect(DisplayWidth.columns("東京タワーに行く") == 16)
        #expect(DisplayWidth.columns("Trip 🇯🇵 → 🇫🇷") == 12)
        #expect(DisplayWidth.columns("Cafe\u{301} de\u{301}ja\u{300} vu") == 12)
        #expect(DisplayWidth.columns("👩\u{200D}💻 review") == 9)
    }

    @Test("Printable ASCII, measured and cut byte by byte, agrees with the clusters")
    func printableASCII() {
        let printable = (0x20...0x7E).map { Character(Unicode.Scalar(UInt8($0))) }
        let all = String(printable)
        #expect(DisplayWidth.columns(all) == 95)
        #expect(DisplayWidth.columns(all) == all.reduce(0) { $0 + DisplayWidth.columns($1) })
        for width in [0, 1, 2, 50, 94, 95, 96] {
            let cut = DisplayWidth.truncated(all, toWidth: width)
            let expected = width >= 95 ? all : width == 0 ? "" : String(all.prefix(width - 1)) + "…"
            #expect(cut == expected, "\(width)")
            #expect(DisplayWidth.columns(cut) <= width)
        }
        // A byte outside the printable range takes the cluster path: a control character is
        // zero columns, and is shown as "�" when cut; "\r\n" is one cluster.
        #expect(DisplayWidth.columns("ab\u{7F}c") == 3)
        #expect(DisplayWidth.columns("ab\r\nc") == 3)
        #expect(DisplayWidth.truncated("ab\u{1F}cdef", toWidth: 4) == "ab\u{FFFD}…")
    }

    @Test("Cutting: at a cluster boundary, with …, never wider than asked")
    func truncation() {
        #expect(DisplayWidth.truncated("Hello, world", toWidth: 12) == "Hello, world")
        #expect(DisplayWidth.truncated("Hello, world", toWidth: 5) == "Hell…")
        #expect(DisplayWidth.truncated("東京タワー", toWidth: 5) == "東京…")
        #expect(DisplayWidth.truncated("東京タワー", toWidth: 4) == "東…")
        #expect(DisplayWidth.truncated("👩\u{200D}💻👩\u{200D}💻", toWidth: 3) == "👩\u{200D}💻…")
        #expect(DisplayWidth.truncated("🇯🇵🇫🇷", toWidth: 3) == "🇯🇵…")
        #expect(DisplayWidth.truncated("e\u{301}e\u{301}e\u{301}", toWidth: 2) == "e\u{301}…")
        #expect(DisplayWidth.truncated("abc", toWidth: 0) == "")
        #expect(DisplayWidth.truncated("abc", toWidth: 1) == "…")
        #expect(DisplayWidth.truncated("a\nb\u{1B}[31m", toWidth: 20) == "a\u{FFFD}b\u{FFFD}[31m")
        for width in 0...20 {
            let cut = DisplayWidth.truncated("混ぜた text 👩\u{200D}💻 and 🇯🇵 e\u{301}", toWidth: width)
            #expect(DisplayWidth.columns(cut) <= width)
        }
    }

    @Test("Padding counts display columns")
    func padding() {
        #expect(DisplayWidth.padded("東京", toWidth: 6) == "東京  ")
        #expect(DisplayWidth.padded("🇯🇵", toWidth: 3) == "🇯🇵 ")
        #expect(DisplayWidth.padded("toolong", toWidth: 3) == "toolong")
    }
}

@Suite("daily-queue: list with titles from every script")
struct ListGoldenTests {
    static let titles: [(title: String, columns: Int)] = [
        ("Laundry", 7),
        ("東京タワーに行く", 16),
        ("Buy 🍎 and 🍌", 13),
        ("👩\u{200D}💻 review with 👨\u{200D}👩\u{200D}👧", 17),
        ("Trip 🇯🇵 → 🇫🇷", 12),
        ("Cafe\u{301} de\u{301}ja\u{300} vu", 12),
        ("全角ＡＢＣ and ｶﾀｶﾅ", 19),
        (
            String(repeating: "An over-long title that keeps going ", count: 4).trimmingCharacters(
                in: .whitespaces), 143
        ),
    ]

    func listed(columns: String?) throws -> DailyQueueCommand.Result {
        let store = try temporaryFolder().appendingPathComponent("queue.json").path
        _ = try DailyQueueCommand.run(["today", "Monday", "--store", store])
        for entry in Self.titles {
            let added = try DailyQueueCommand.run(["add", "--done", "--store", store, "--", entry.title])
            #expect(added.status == 0, "\(added.err)")
        }
        return try DailyQueueCommand.run(["list", "--store", store], environment: ["COLUMNS": columns ?? ""])
    }

    /// The expected row: the title padded to `width` columns by hand-counted spaces.
    func row(_ index: Int, title: String, columns: Int, width: Int) -> String {
        "  \(index + 1)    #\(index + 1)  " + title + String(repeating: " ", count: width - columns)
            + "  Monday  yes"
    }

    @Test("COLUMNS=60: the long title is cut with …, every column starts at the same display column")
    func sixtyColumns() throws {
        let result = try listed(columns: "60")
        #expect(result.status == 0)
        // 60 columns leave 35 for titles: indent 2, pos 3, id 2, day 6, done 4, four gaps of 2.
        var expected = [
            "Monday's queue (8 item(s)):",
            "  pos  id  title" + String(repeating: " ", count: 30) + "  day     done",
        ]
        for (index, entry) in Self.titles.enumerated() {
            if entry.columns > 35 {
                expected.append(
                    row(index, title: "An over-long title that keeps goin…", columns: 35, width: 35))
            } else {
                expected.append(row(index, title: entry.title, columns: entry.columns, width: 35))
            }
        }
        #expect(result.out == expected.joined(separator: "\n") + "\n")
        try expectAligned(result.out, width: 60)
    }

    @Test("Without COLUMNS the table fits 80 columns")
    func defaultWidth() throws {
        let result = try listed(columns: nil)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 10)
        #expect(
            lines[9].hasPrefix("  8    #8  An over-long title that keeps going An over-long title…  Monday"))
        try expectAligned(result.out, width: 80)
    }

    /// Every row's columns start at the same display column, and no row is wider than `width`.
    func expectAligned(_ output: String, width: Int) throws {
        let lines = output.split(separator: "\n").map(String.init).dropFirst()
        let header = try #require(lines.first)
        func start(of marker: String, in line: String) -> Int? {
            line.range(of: marker).map { DisplayWidth.columns(String(line[..<$0.lowerBound])) }
        }
        let titleColumn = try #require(start(of: "title", in: header))
        let dayColumn = try #require(start(of: "day", in: header))
        for line in lines.dropFirst() {
            #expect(start(of: "  Monday  ", in: line).map { $0 + 2 } == dayColumn, "\(line)")
            #expect(start(of: "#", in: line).map { $0 + 4 } == titleColumn, "\(line)")
            #expect(DisplayWidth.columns(line) <= width, "\(line)")
        }
    }
}
