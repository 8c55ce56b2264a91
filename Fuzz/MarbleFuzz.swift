// Fuzz target: the marble diagram parser and renderer (ObserverGraphTesting).
//
// Property: parsing never crashes; it returns a diagram or throws `MarbleParseError`. Whatever
// parses renders to text that parses back to the same diagram, and that text renders to itself
// (the renderer's output is a fixed point). The input's first byte chooses a second mode, in
// which the bytes build rows directly (labels, lengths, events with any text); rendering such a
// diagram and parsing it back must give it back as well.
import ObserverGraph
import ObserverGraphTesting

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMarbles(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let mode = bytes.first else { return 0 }
    if mode & 1 == 0 {
        checkText(String(decoding: bytes.dropFirst(), as: UTF8.self))
    } else {
        checkRows(Array(bytes.dropFirst()))
    }
    return 0
}

/// Parse, render, parse again: the same diagram; render again: the same text.
func checkText(_ text: String) {
    let diagram: MarbleDiagram
    do {
        diagram = try MarbleDiagram(parsing: text)
    } catch {
        return  // refused with a typed error: fine
    }
    let rendered = diagram.text
    guard let again = try? MarbleDiagram(parsing: rendered) else {
        fatalError("the rendering of a parsed diagram does not parse:\n\(rendered)\nfrom:\n\(text)")
    }
    guard again == diagram else {
        fatalError("round trip changed the diagram:\n\(text)\n->\n\(rendered)")
    }
    guard again.text == rendered else {
        fatalError("rendering is not a fixed point:\n\(rendered)\n->\n\(again.text)")
    }
}

/// Rows built from bytes: render, parse, compare.
func checkRows(_ bytes: [UInt8]) {
    var reader = ByteReader(bytes)
    var rows: [MarbleRow] = []
    let rowCount = Int(reader.next() % 4) + 1
    for _ in 0..<rowCount {
        let label = reader.text(maxLength: 6)
        let length = Int(reader.next() % 24)
        var events: [MarbleEvent] = []
        for _ in 0..<Int(reader.next() % 6) {
            let step = Int(reader.next() % 24)
            let symbol: MarbleSymbol
            switch reader.next() % 6 {
            case 0: symbol = .finished
            case 1: symbol = .failed
            case 2: symbol = .subscribed
            case 3: symbol = .unsubscribed
            default: symbol = .value(reader.text(maxLength: 5))
            }
            events.append(MarbleEvent(symbol, at: step))
        }
        rows.append(MarbleRow(label: label, length: length, events: events))
    }
    let diagram = MarbleDiagram(rows)
    let rendered = diagram.text
    let parsed: MarbleDiagram
    do {
        parsed = try MarbleDiagram(parsing: rendered)
    } catch {
        fatalError("a rendered diagram does not parse: \(error)\n\(rendered)\nrows: \(rows)")
    }
    guard parsed == diagram else {
        fatalError("render/parse changed the rows:\n\(rendered)\nwant \(rows)\ngot  \(parsed.rows)")
    }
}

/// Reads the fuzzer's bytes as choices; past the end every choice is 0.
struct ByteReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Up to `maxLength` Unicode scalars, drawn from a palette that includes the notation's
    /// reserved characters, escapes, whitespace, controls and combining marks.
    mutating func text(maxLength: Int) -> String {
        let palette: [Unicode.Scalar] = [
            "a", "Z", "5", "-", "(", ")", "[", "]", "X", "|", "^", "!", ">", "\\", ":", " ", "\t",
            "\u{7}", "\u{2028}", "\u{301}", "é", "日", "{", "}", "u", "0",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int(next()) % (maxLength + 1) {
            let choice = next()
            if choice >= 240 {
                // Any scalar at all, now and then.
                let value = UInt32(next()) << 8 | UInt32(next())
                scalars.append(Unicode.Scalar(value) ?? "?")
            } else {
                scalars.append(palette[Int(choice) % palette.count])
            }
        }
        return String(scalars)
    }
}
