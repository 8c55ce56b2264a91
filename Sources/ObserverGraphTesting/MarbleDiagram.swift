/// What happens at one time step of a marble row.
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
/// - Complexity: O(1) to create; comparison is O(length of the value text).
public enum MarbleSymbol: Hashable, Sendable {
    /// A value, shown by its text: bare when it is one character, `[text]` otherwise.
    case value(String)
    /// `|`: the stream finished (`GraphEvent.finished`).
    case finished
    /// `X`: the stream failed (`GraphEvent.failed`).
    case failed
    /// `^`: the observer was subscribed (its `didSubscribe(to:)` callback).
    case subscribed
    /// `!`: the observer was unsubscribed (its `didUnsubscribe(from:)` callback).
    case unsubscribed
}

/// A symbol at a time step.
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
/// - Complexity: O(1) to create.
public struct MarbleEvent: Hashable, Sendable {
    /// The time step, from 0.
    public let step: Int
    /// What happened.
    public let symbol: MarbleSymbol

    /// The last step an event can have: one before `Int.max`, so that a row can always cover
    /// its last event (`length` is one more than that event's step).
    public static let maximumStep = Int.max - 1

    /// `symbol` at `step`. A negative step counts as step 0, and a step after `maximumStep`
    /// (that is, `Int.max`, where a `VirtualClock` advanced by `.max` stops) as `maximumStep`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ symbol: MarbleSymbol, at step: Int) {
        self.step = min(max(0, step), Self.maximumStep)
        self.symbol = symbol
    }
}

/// One labelled line of a marble diagram: the events of one stream over `length` time steps.
///
///     item.Done : ---------T--------F-X->
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
public struct MarbleRow: Hashable, Sendable {
    /// The label before the colon; empty for an unlabelled row.
    public let label: String
    /// How many time steps the row covers (steps `0..<length`); at least one more than the step
    /// of its last event, and at most `Int.max`.
    public let length: Int
    /// The events, ordered by step; events at the same step keep their order.
    public let events: [MarbleEvent]

    /// A row. The values are normalized, so that rendering and parsing give the same row back:
    /// `events` are sorted by step (stably), `length` grows to cover the last event, and the label
    /// loses its trailing whitespace and has its line breaks replaced by spaces.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(n log n), n = events.
    public init(label: String = "", length: Int = 0, events: [MarbleEvent]) {
        var scalars = String.UnicodeScalarView()
        for scalar in label.unicodeScalars {
            scalars.append(scalar == "\n" || scalar == "\r" ? " " : scalar)
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        self.label = String(scalars)
        let sorted = events.enumerated().sorted {
            ($0.element.step, $0.offset) < ($1.element.step, $1.offset)
        }
        self.events = sorted.map(\.element)
        // Cannot overflow: an event's step is at most `MarbleEvent.maximumStep`.
        self.length = max(length, (self.events.last?.step ?? -1) + 1)
    }
}

/// A marble diagram: labelled rows of events on one shared time axis, as text and back.
///
///     let diagram = try MarbleDiagram(parsing: """
///         queue    : []-[itemA]------[]--->
///         item.Done: ----------T-----F--X->
///         """)
///     diagram.rows[1].events    // T at step 3, F at step 9, X at step 11
///     print(diagram)            // the same text
///
/// **Notation** (the source document's, with the choices it leaves open made explicit):
/// - `-` is one time step in which nothing happens. Step 0 is the first character.
/// - A value is one character (`a`, `T`, `5`), or a bracketed token for anything else
///   (`[items_add_1]`, `[10]`, `[]` for an empty text). A value that is a reserved character
///   (`- ( ) [ ] X | ^ ! > \`), whitespace, a control or a combining character is bracketed too,
///   so `[X]` is the value "X" while `X` is an error.
/// - `X` is an error (`failed`), `|` completion (`finished`), `^` a subscription callback, `!` an
///   unsubscription callback.
/// - Several events at the same step are a group, in order: `(ab)`, `(a|)`, `([10]X)`.
/// - `->` ends every row. The row covers the steps before it; a row that finished usually ends
///   right after its `|`, as in `--a-|->`.
/// - A labelled row is `label : timeline`. The labels are padded with spaces so that the colons
///   line up, followed by `": "`. An unlabelled row in a labelled diagram has an empty label;
///   a diagram with no labels has no colons at all.
/// - Inside brackets, `\` escapes the next character: the renderer writes `\\`, `\]`, and `\ `
///   for a space right after a colon (so that `": "` never appears in a timeline and always
///   separates the label), and `\u{hex}` for control and line-separator characters.
/// - Alignment: all rows share one time axis. A step is as wide as its widest cell in any row;
///   narrower cells are padded with `-` on the right. So in a diagram where one row shows
///   `[items]` at step 2, the other rows show `-------` there, and it is still one step. Widths
///   count Unicode scalars; wide or composed characters can look misaligned but parse exactly.
///
/// Parsing accepts exactly what rendering produces, plus whitespace around labels (any padding,
/// trailing spaces on a line, blank lines), a one-event group `(a)`, and brackets around a value
/// that could stand bare (`[a]`). So `MarbleDiagram(parsing: d.text) == d` for every diagram `d`
/// of at most `maximumRenderedSteps` steps.
///
/// **Long rows.** A row can cover up to `Int.max` steps (a recorder whose clock was advanced by
/// `.max`), far more than any text can show. `text` writes the first `maximumRenderedSteps`
/// steps of such a diagram and ends each longer row with `-> (N more steps, E more events not
/// shown)`. That line does not parse back (it does not end with `->`), so a truncated diagram
/// is never mistaken for a complete one. Comparing diagrams (`==`, `verify(matches:)`) works
/// at any length.
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
public struct MarbleDiagram: Hashable, Sendable, CustomStringConvertible {
    /// The rows, top to bottom.
    public var rows: [MarbleRow]

    /// The most time steps `text` writes; see "Long rows".
    public static let maximumRenderedSteps = 100_000

    /// A diagram of `rows`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ rows: [MarbleRow]) {
        self.rows = rows
    }

    /// A diagram of `rows`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ rows: MarbleRow...) {
        self.rows = rows
    }

    /// Parses a diagram in the notation above.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Throws: `MarbleParseError`, with the line and column of the first problem.
    /// - Complexity: O(length of the text).
    public init(parsing text: String) throws {
        rows = try _MarbleParser.parse(text)
    }

    /// The diagram as text: one line per row, aligned, with no trailing newline; a row longer
    /// than `maximumRenderedSteps` is cut there, and says so (see "Long rows").
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(rows × steps + length of the text), steps at most `maximumRenderedSteps`.
    public var text: String {
        _MarbleRenderer.render(rows)
    }

    /// The diagram as text (`text`).
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: as `text`.
    public var description: String { text }

    /// Checks this diagram against the one `expected` describes, for tests:
    ///
    ///     try MarbleDiagram(recorder.marbleRow()).verify(matches: """
    ///         done: T--F-|->
    ///         """)
    ///
    /// In a throwing Swift Testing test, a mismatch fails the test with both diagrams printed one
    /// above the other.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Throws: `MarbleParseError` if `expected` is not a diagram; `MarbleMismatch` if it
    ///   differs from this one.
    /// - Complexity: O(length of both diagrams).
    public func verify(matches expected: String) throws {
        let expectedDiagram = try MarbleDiagram(parsing: expected)
        if expectedDiagram != self {
            throw MarbleMismatch(expected: expectedDiagram, actual: self)
        }
    }
}

/// Two diagrams that should be equal and are not; its description shows both, one above the
/// other, and where they first differ.
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
public struct MarbleMismatch: Error, Hashable, Sendable, CustomStringConvertible {
    /// The diagram the test expected.
    public let expected: MarbleDiagram
    /// The diagram that happened.
    public let actual: MarbleDiagram

    /// A mismatch between `expected` and `actual`, for assertions of your own.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init(expected: MarbleDiagram, actual: MarbleDiagram) {
        self.expected = expected
        self.actual = actual
    }

    /// The report: the first difference, then the expected and the actual diagram.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(length of both diagrams).
    public var description: String {
        """
        marble diagrams differ: \(firstDifference)
        expected:
        \(expected.text)
        actual:
        \(actual.text)
        """
    }

    private var firstDifference: String {
        for (index, (want, got)) in zip(expected.rows, actual.rows).enumerated() where want != got {
            let name = "row \(index + 1)" + (want.label.isEmpty ? "" : " (\(want.label))")
            if want.label != got.label {
                return "row \(index + 1) is labelled \"\(got.label)\", expected \"\(want.label)\""
            }
            // Only steps with events, and the end of the shorter row, can differ: the rows may
            // be up to `Int.max` steps long, so the steps are not walked one by one.
            var candidates = Set(want.events.map(\.step)).union(got.events.map(\.step))
            if want.length != got.length { candidates.insert(min(want.length, got.length)) }
            for step in candidates.sorted() {
                let wanted = Self.cell(want, step)
                let found = Self.cell(got, step)
                if wanted != found { return "\(name), step \(step): expected \(wanted), got \(found)" }
            }
        }
        return "expected \(expected.rows.count) rows, got \(actual.rows.count)"
    }

    private static func cell(_ row: MarbleRow, _ step: Int) -> String {
        guard step < row.length else { return "the end of the row" }
        let symbols = row.events.filter { $0.step == step }.map(\.symbol)
        return symbols.isEmpty ? "-" : _MarbleRenderer.cell(symbols)
    }
}

/// Where and why a marble diagram could not be parsed.
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
public struct MarbleParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line of the text, from 1 (blank lines count).
    public let line: Int
    /// The column in that line, from 1, in Unicode scalars.
    public let column: Int
    /// What is wrong.
    public let message: String
    /// The text of the line.
    public let lineText: String

    /// The message with the line and a caret under the column.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(length of the line).
    public var description: String {
        "marble diagram, line \(line), column \(column): \(message)\n\(lineText)\n"
            + String(repeating: " ", count: max(0, column - 1)) + "^"
    }
}

// MARK: - Rendering

enum _MarbleRenderer {
    static let reserved: Set<Unicode.Scalar> = ["-", "(", ")", "[", "]", "X", "|", "^", "!", ">", "\\"]

    /// Whether a value with this text is shown without brackets: one letter, digit, punctuation
    /// or symbol that is not reserved.
    static func isBare(_ text: String) -> Bool {
        var scalars = text.unicodeScalars.makeIterator()
        guard let scalar = scalars.next(), scalars.next() == nil else { return false }
        return isBare(scalar)
    }

    static func isBare(_ scalar: Unicode.Scalar) -> Bool {
        if reserved.contains(scalar) { return false }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber,
            .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation,
            .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }

    static func text(of symbol: MarbleSymbol) -> String {
        switch symbol {
        case .finished: return "|"
        case .failed: return "X"
        case .subscribed: return "^"
        case .unsubscribed: return "!"
        case .value(let text):
            if isBare(text) { return text }
            var result = String.UnicodeScalarView()
            result.append("[")
            var previous: Unicode.Scalar?
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\\", "]":
                    result.append("\\")
                    result.append(scalar)
                case " " where previous == ":":
                    result.append("\\")
                    result.append(scalar)
                default:
                    switch scalar.properties.generalCategory {
                    case .control, .lineSeparator, .paragraphSeparator:
                        result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
                    default:
                        result.append(scalar)
                    }
                }
                previous = scalar
            }
            result.append("]")
            return String(result)
        }
    }

    /// The text of one step holding `symbols` (at least one).
    static func cell(_ symbols: [MarbleSymbol]) -> String {
        if symbols.count == 1 { return text(of: symbols[0]) }
        return "(" + symbols.map(text(of:)).joined() + ")"
    }

    static func render(_ rows: [MarbleRow]) -> String {
        let limit = MarbleDiagram.maximumRenderedSteps
        let cells: [[String]] = rows.map { row in
            var symbols = [[MarbleSymbol]](repeating: [], count: min(row.length, limit))
            for event in row.events where event.step < limit { symbols[event.step].append(event.symbol) }
            return symbols.map { $0.isEmpty ? "-" : cell($0) }
        }
        let steps = min(rows.map(\.length).max() ?? 0, limit)
        var widths = [Int](repeating: 1, count: steps)
        for row in cells {
            for (step, cell) in row.enumerated() {
                widths[step] = max(widths[step], cell.unicodeScalars.count)
            }
        }
        let labelled = rows.contains { !$0.label.isEmpty }
        let labelWidth = rows.map(\.label.unicodeScalars.count).max() ?? 0
        var lines: [String] = []
        for (row, rowCells) in zip(rows, cells) {
            var line = ""
            if labelled {
                line +=
                    row.label + String(repeating: " ", count: labelWidth - row.label.unicodeScalars.count)
                    + ": "
            }
            for (step, cell) in rowCells.enumerated() {
                line += cell + String(repeating: "-", count: widths[step] - cell.unicodeScalars.count)
            }
            line += "->"
            if row.length > limit {
                let hidden = row.events.count { $0.step >= limit }
                line += " (\(row.length - limit) more steps, \(hidden) more events not shown)"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Parsing

enum _MarbleParser {
    /// One row's line: where its timeline starts and what it holds.
    private struct Line {
        let number: Int
        let scalars: [Unicode.Scalar]
        let label: String
        /// The timeline's scalars: between the label separator and the final `->`.
        let timeline: ArraySlice<Unicode.Scalar>

        func error(at index: Int, _ message: String) -> MarbleParseError {
            MarbleParseError(
                line: number, column: index + 1, message: message,
                lineText: String(String.UnicodeScalarView(scalars)))
        }
    }

    static func parse(_ text: String) throws -> [MarbleRow] {
        let lines = try splitLines(text)
        var events = [[MarbleEvent]](repeating: [], count: lines.count)
        var lengths = [Int](repeating: 0, count: lines.count)
        // All timelines share the step grid: `offset` is the current step's first scalar in each.
        var offset = 0
        var step = 0
        while true {
            let active = lines.indices.filter { offset < lines[$0].timeline.count }
            if active.isEmpty { break }
            var cells: [(symbols: [MarbleSymbol], width: Int)] = []
            for row in active { cells.append(try readCell(lines[row], at: offset)) }
            let width = cells.map(\.width).max()!
            let widest = active[cells.firstIndex { $0.width == width }!]
            for (row, cell) in zip(active, cells) {
                let line = lines[row]
                let start = line.timeline.startIndex + offset
                let end = start + width
                if end > line.timeline.endIndex {
                    throw line.error(
                        at: line.timeline.endIndex,
                        "the row ends inside step \(step), which is \(width) wide to fit line \(lines[widest].number)"
                    )
                }
                for index in (start + cell.width)..<end where line.scalars[index] != "-" {
                    throw line.error(
                        at: index,
                        "expected \"-\" to pad step \(step) to the width of its cell in line \(lines[widest].number)"
                    )
                }
                for symbol in cell.symbols { events[row].append(MarbleEvent(symbol, at: step)) }
                lengths[row] = step + 1
            }
            offset += width
            step += 1
        }
        return lines.indices.map {
            MarbleRow(label: lines[$0].label, length: lengths[$0], events: events[$0])
        }
    }

    private static func splitLines(_ text: String) throws -> [Line] {
        var result: [Line] = []
        var number = 0
        for raw in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            var scalars = Array(raw)
            while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
            if scalars.isEmpty { continue }
            let count = scalars.count
            guard count >= 2, scalars[count - 2] == "-", scalars[count - 1] == ">" else {
                throw MarbleParseError(
                    line: number, column: count + 1, message: "a row must end with \"->\"",
                    lineText: String(String.UnicodeScalarView(scalars)))
            }
            // The label ends at the last ": " (a timeline never contains one).
            var separator: Int?
            var index = count - 3
            while index >= 0 {
                if scalars[index] == ":" && scalars[index + 1] == " " {
                    separator = index
                    break
                }
                index -= 1
            }
            var label = ""
            var start = 0
            if let separator {
                label = String(String.UnicodeScalarView(scalars[..<separator]))
                start = separator + 2
            }
            result.append(
                Line(number: number, scalars: scalars, label: label, timeline: scalars[start..<(count - 2)]))
        }
        return result
    }

    /// Reads the cell of one step at `offset` in the line's timeline: `-`, an event, or a group.
    private static func readCell(_ line: Line, at offset: Int) throws -> (symbols: [MarbleSymbol], width: Int)
    {
        let start = line.timeline.startIndex + offset
        switch line.scalars[start] {
        case "-":
            return ([], 1)
        case "(":
            var index = start + 1
            var symbols: [MarbleSymbol] = []
            while true {
                guard index < line.timeline.endIndex else {
                    throw line.error(at: start, "this group has no closing \")\"")
                }
                if line.scalars[index] == ")" { break }
                let (symbol, width) = try readEvent(line, at: index, inGroup: true)
                symbols.append(symbol)
                index += width
            }
            if symbols.isEmpty {
                throw line.error(at: start, "an empty group; write \"-\" for an empty step")
            }
            return (symbols, index + 1 - start)
        default:
            let (symbol, width) = try readEvent(line, at: start, inGroup: false)
            return ([symbol], width)
        }
    }

    /// Reads one event at scalar `index` of the line.
    private static func readEvent(_ line: Line, at index: Int, inGroup: Bool) throws -> (MarbleSymbol, Int) {
        let scalar = line.scalars[index]
        switch scalar {
        case "X": return (.failed, 1)
        case "|": return (.finished, 1)
        case "^": return (.subscribed, 1)
        case "!": return (.unsubscribed, 1)
        case "[": return try readToken(line, at: index)
        case "-" where inGroup:
            throw line.error(at: index, "\"-\" inside a group; a group holds the events of one step")
        case "(" where inGroup:
            throw line.error(at: index, "groups do not nest")
        default:
            guard _MarbleRenderer.isBare(scalar) else {
                let shown = scalar.properties.isWhitespace ? "whitespace" : "\"\(scalar)\""
                let bracketed = _MarbleRenderer.text(of: .value(String(scalar)))
                throw line.error(
                    at: index, "\(shown) cannot stand alone in a timeline; bracket it, as in \(bracketed)")
            }
            return (.value(String(scalar)), 1)
        }
    }

    /// Reads a bracketed value starting at the `[` at `start`.
    private static func readToken(_ line: Line, at start: Int) throws -> (MarbleSymbol, Int) {
        var text = String.UnicodeScalarView()
        var index = start + 1
        let end = line.timeline.endIndex
        while true {
            guard index < end else { throw line.error(at: start, "this value has no closing \"]\"") }
            let scalar = line.scalars[index]
            if scalar == "]" { break }
            guard scalar == "\\" else {
                text.append(scalar)
                index += 1
                continue
            }
            guard index + 1 < end else { throw line.error(at: index, "a \"\\\" must escape a character") }
            if line.scalars[index + 1] == "u", index + 2 < end, line.scalars[index + 2] == "{" {
                var digits = ""
                var cursor = index + 3
                while cursor < end, line.scalars[cursor] != "}" {
                    digits.unicodeScalars.append(line.scalars[cursor])
                    cursor += 1
                }
                guard cursor < end, let value = UInt32(digits, radix: 16), let decoded = Unicode.Scalar(value)
                else {
                    throw line.error(at: index, "\"\\u{...}\" needs the hex code of a Unicode scalar")
                }
                text.append(decoded)
                index = cursor + 1
            } else {
                text.append(line.scalars[index + 1])
                index += 2
            }
        }
        return (.value(String(text)), index + 1 - start)
    }
}
