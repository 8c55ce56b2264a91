import ObserverGraphTesting
import Testing

// Rows from `(step, symbol)` pairs, for brevity.

private func row(_ label: String, length: Int = 0, _ events: (Int, MarbleSymbol)...) -> MarbleRow {
    MarbleRow(label: label, length: length, events: events.map { MarbleEvent($0.1, at: $0.0) })
}

private func row(length: Int = 0, _ events: (Int, MarbleSymbol)...) -> MarbleRow {
    MarbleRow(label: "", length: length, events: events.map { MarbleEvent($0.1, at: $0.0) })
}

@Suite("Marble diagrams: rendering, parsing, round trips, mismatches")
struct MarbleDiagramTests {
    @Test("Every symbol renders in the notation of the source document")
    func everySymbol() {
        let events = row(
            length: 24, (2, .value("a")), (6, .value("b")), (8, .value("c")), (12, .value("d")),
            (16, .failed),
            (20, .finished))
        #expect(MarbleDiagram(events).text == "--a---b-c---d---X---|---->")
        #expect(MarbleDiagram(row((0, .subscribed), (3, .unsubscribed))).text == "^--!->")
        #expect(MarbleDiagram(row((1, .value("[items]")))).text == "-[[items\\]]->")
        #expect(MarbleDiagram(row((0, .value("items_add_1")), (1, .value("")))).text == "[items_add_1][]->")
        #expect(
            MarbleDiagram(row((0, .value("X")), (1, .value("|")), (2, .value(" ")))).text == "[X][|][ ]->")
        #expect(
            MarbleDiagram(row((0, .value("-")), (1, .value("10")), (2, .value("é")))).text == "[-][10]é->")
        #expect(MarbleDiagram(row(length: 3)).text == "---->")
        #expect(MarbleDiagram(row()).text == "->")
        #expect(MarbleDiagram().text == "")
    }

    @Test("Events at the same step form a group, in order")
    func groups() {
        let grouped = row((0, .value("a")), (0, .value("b")), (2, .value("c")), (2, .finished))
        #expect(MarbleDiagram(grouped).text == "(ab)-(c|)->")
        let mixed = row((1, .subscribed), (1, .value("10")), (1, .failed))
        #expect(MarbleDiagram(mixed).text == "-(^[10]X)->")
        // The order within a step is kept; the order of steps is sorted.
        #expect(row((3, .value("z")), (1, .value("y")), (3, .value("x"))).events.map(\.step) == [1, 3, 3])
        #expect(MarbleDiagram(row((3, .value("z")), (1, .value("y")), (3, .value("x")))).text == "-y-(zx)->")
    }

    @Test("Labelled rows: colons in one column, one time axis, wide cells padded with dashes")
    func alignment() {
        let diagram = MarbleDiagram(
            row("add(itemA)", (0, .value("O"))),
            row("queue", length: 6, (2, .value("itemA"))),
            row("item.Done", (3, .value("T")), (5, .value("F")), (6, .failed)),
            row(length: 2),
            row("remove(itemA)", (5, .value("O"))))
        #expect(
            diagram.text == """
                add(itemA)   : O->
                queue        : --[itemA]---->
                item.Done    : ---------T-FX->
                             : --->
                remove(itemA): -----------O->
                """)
        #expect(diagram.description == diagram.text)
    }

    @Test("Escapes inside brackets: backslash, closing bracket, colon-space, line breaks")
    func escapes() throws {
        let tricky = row(
            "odd: label", (0, .value("a\\b")), (1, .value("x]y")), (2, .value("k: v")), (3, .value("1\n2")))
        let text = MarbleDiagram(tricky).text
        #expect(text == #"odd: label: [a\\b][x\]y][k:\ v][1\u{a}2]->"#)
        #expect(try MarbleDiagram(parsing: text) == MarbleDiagram(tricky))
        // Only the last ": " separates the label; a timeline never contains one.
        #expect(try MarbleDiagram(parsing: text).rows[0].label == "odd: label")
    }

    @Test("The source document's diagrams parse (with -> added where it left it out)")
    func sourceDocument() throws {
        let first = try MarbleDiagram(parsing: "--a---b-c---d---X---|->")
        #expect(
            first.rows == [
                row(
                    (2, .value("a")), (6, .value("b")), (8, .value("c")), (12, .value("d")), (16, .failed),
                    (20, .finished))
            ])
        let typed = try MarbleDiagram(parsing: "Observable<Int>    : --2---3-------4-----5-|->")
        #expect(typed.rows[0].label == "Observable<Int>")
        #expect(typed.rows[0].events.map(\.step) == [2, 6, 14, 20, 22])
        let queue = try MarbleDiagram(
            parsing: """
                add(itemA)   : O->
                subscribe()  : -O->
                queue        : --[itemA]------------->
                item.Done    : ---------T--------F-X->
                remove(itemA): -------------------O->
                """)
        // [itemA] makes step 2 seven columns wide, so T is at step 3, F at 12, X at 14.
        #expect(queue.rows[3] == row("item.Done", (3, .value("T")), (12, .value("F")), (14, .failed)))
        #expect(queue.rows[4] == row("remove(itemA)", (13, .value("O"))))
        #expect(queue.rows[2].length == 15)
    }

    @Test("parse(render(x)) == x for every form, and render(parse(t)) == t for canonical text")
    func roundTrips() throws {
        let samples: [MarbleDiagram] = [
            MarbleDiagram(),
            MarbleDiagram(row()),
            MarbleDiagram(row(length: 5)),
            MarbleDiagram(row("only", length: 3)),
            MarbleDiagram(row((0, .value("a")), (0, .value("[x]")), (0, .failed)), row(length: 1)),
            MarbleDiagram(row("a", (1, .value("long value"))), row("", (0, .finished)), row("bb", length: 4)),
            MarbleDiagram(row("  indented", (0, .subscribed), (4, .unsubscribed), (4, .value("\\")))),
            MarbleDiagram(
                row("x", (2, .value("")), (2, .value(":")), (3, .value(": ")), (3, .value("\u{2028}")))),
        ]
        for sample in samples {
            #expect(try MarbleDiagram(parsing: sample.text) == sample, "\(sample.text)")
        }
        let canonical = [
            "--a---b-c---d---X---|->",
            "done: T--F-|->\nday : 2--3----->",
            "a: -([xy]b|)->\n : -->",
            "[items]-[items_remove_1]->",
        ]
        for text in canonical {
            #expect(try MarbleDiagram(parsing: text).text == text, "\(text)")
        }
    }

    @Test("Random diagrams survive the round trip (seeded)", arguments: [1, 2, 3, 4])
    func randomRoundTrips(seed: UInt64) throws {
        var random = Xorshift(seed: seed)
        let alphabet: [String] = [
            "a", "T", "5", "X", "|", "-", "(", ")", "[", "]", "\\", ":", " ", ": ", "", "ab", "é", "\n", "->",
            "^",
        ]
        for _ in 0..<200 {
            var rows: [MarbleRow] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                var events: [MarbleEvent] = []
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    let symbol: MarbleSymbol
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: symbol = .finished
                    case 1: symbol = .failed
                    case 2: symbol = .subscribed
                    case 3: symbol = .unsubscribed
                    default:
                        let parts = Int.random(in: 1...3, using: &random)
                        symbol = .value(
                            (0..<parts).map { _ in alphabet.randomElement(using: &random)! }.joined())
                    }
                    events.append(MarbleEvent(symbol, at: Int.random(in: 0..<8, using: &random)))
                }
                let label = ["", "a", "long label", "x: y", " pad"].randomElement(using: &random)!
                rows.append(
                    MarbleRow(label: label, length: Int.random(in: 0..<10, using: &random), events: events))
            }
            let diagram = MarbleDiagram(rows)
            #expect(try MarbleDiagram(parsing: diagram.text) == diagram, "\(diagram.text)")
        }
    }

    @Test("Parsing is lenient about whitespace around labels, and a one-event group")
    func lenient() throws {
        let loose = try MarbleDiagram(parsing: "\n   \ndone   : T--F->   \n\nday      : -2->\n")
        #expect(
            loose
                == MarbleDiagram(
                    row("done", (0, .value("T")), (3, .value("F"))), row("day", (1, .value("2")))))
        #expect(loose.text == "done: T--F->\nday : -2->")
        #expect(try MarbleDiagram(parsing: "-(a)->") == MarbleDiagram(row((1, .value("a")))))
    }

    @Test("Parse errors name the line and column, and show them")
    func parseErrors() {
        func failure(_ text: String) -> MarbleParseError? {
            do {
                _ = try MarbleDiagram(parsing: text)
                return nil
            } catch let error as MarbleParseError {
                return error
            } catch {
                return nil
            }
        }
        let cases: [(String, Int, Int, String)] = [
            ("--a--", 1, 6, "a row must end with \"->\""),
            ("-[ab->", 1, 2, "this value has no closing \"]\""),
            ("-(ab->", 1, 2, "this group has no closing \")\""),
            ("-()->", 1, 2, "an empty group; write \"-\" for an empty step"),
            ("((a))->", 1, 2, "groups do not nest"),
            ("(a-b)->", 1, 3, "\"-\" inside a group; a group holds the events of one step"),
            ("a b->", 1, 2, "whitespace cannot stand alone in a timeline; bracket it, as in [ ]"),
            ("a]->", 1, 2, "\"]\" cannot stand alone in a timeline; bracket it, as in [\\]]"),
            ("[\\u{zz}]->", 1, 2, "\"\\u{...}\" needs the hex code of a Unicode scalar"),
            (
                "\na: --[long]->\nb: ---x----->", 3, 7,
                "expected \"-\" to pad step 2 to the width of its cell in line 2"
            ),
            ("a: --[long]->\nb: ---->", 2, 7, "the row ends inside step 2, which is 6 wide to fit line 1"),
        ]
        for (text, line, column, message) in cases {
            let error = failure(text)
            #expect(error?.line == line, "\(text)")
            #expect(error?.column == column, "\(text)")
            #expect(error?.message == message, "\(text)")
        }
        #expect(
            failure("done : T-F")?.description == """
                marble diagram, line 1, column 11: a row must end with "->"
                done : T-F
                          ^
                """)
    }

    @Test("A mismatch shows where the diagrams first differ, and both, one above the other")
    func mismatch() throws {
        let actual = MarbleDiagram(
            row("done", (0, .value("T")), (4, .value("F"))), row("day", length: 5, (0, .value("2"))))
        try actual.verify(matches: "done: T---F->\nday : 2----->")
        do {
            try actual.verify(matches: "done: T--F->\nday : 2----->")
            Issue.record("expected a mismatch")
        } catch let mismatch as MarbleMismatch {
            #expect(
                mismatch.description == """
                    marble diagrams differ: row 1 (done), step 3: expected F, got -
                    expected:
                    done: T--F->
                    day : 2----->
                    actual:
                    done: T---F->
                    day : 2----->
                    """)
        }
        #expect(throws: MarbleMismatch.self) { try actual.verify(matches: "done: T---F->") }
        #expect(throws: MarbleMismatch.self) { try actual.verify(matches: "dune: T---F->\nday : 2----->") }
        #expect(throws: MarbleParseError.self) { try actual.verify(matches: "done: T---F") }
        let short = MarbleMismatch(
            expected: MarbleDiagram(row(length: 2)), actual: MarbleDiagram(row(length: 3)))
        #expect(
            short.description.hasPrefix(
                "marble diagrams differ: row 1, step 2: expected the end of the row, got -"))
        let extra = MarbleMismatch(expected: MarbleDiagram(), actual: MarbleDiagram(row()))
        #expect(extra.description.hasPrefix("marble diagrams differ: expected 0 rows, got 1"))
        let relabelled = MarbleMismatch(expected: MarbleDiagram(row("a")), actual: MarbleDiagram(row("b")))
        #expect(
            relabelled.description.hasPrefix(
                "marble diagrams differ: row 1 is labelled \"b\", expected \"a\""))
    }
}

/// A small deterministic generator, so the random round trips reproduce from their seed.
private struct Xorshift: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
