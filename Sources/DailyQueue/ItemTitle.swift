/// The rules for an item's title: what `QueueManager.add` accepts.
///
/// A title is trimmed of surrounding white space, must not be empty, has at most
/// `maximumLength` characters (grapheme clusters, as people count them: "🇯🇵" and "é" are one
/// each), and contains no control character: no line break, tab, escape sequence, line or
/// paragraph separator, or bidirectional override (which would reorder what a table shows).
/// Each character is made of at most `maximumScalarsPerCharacter` Unicode scalars, so that 200
/// characters stay a short line of text (one letter and 60,000 combining marks is one character).
public enum ItemTitle {
    /// The most characters a title may have: 200.
    public static let maximumLength = 200

    /// The most Unicode scalars one character of a title may be made of: 32 (a letter and the 30
    /// marks Unicode's stream-safe text format allows after it; the longest emoji sequences are
    /// about 10).
    public static let maximumScalarsPerCharacter = 32

    /// `raw`, trimmed, if it is a valid title.
    ///
    /// Thread safety: a pure function. Callbacks: none.
    /// - Throws: `.emptyTitle`, `.titleTooLong`, `.characterTooComplex` or
    ///   `.controlCharacterInTitle`.
    /// - Complexity: O(length of `raw`).
    public static func validated(_ raw: String) throws(QueueError) -> String {
        let trimmed = trim(raw)
        guard !trimmed.isEmpty else { throw .emptyTitle }
        if let bad = trimmed.unicodeScalars.first(where: isForbidden) {
            throw .controlCharacterInTitle(found: name(bad))
        }
        var length = 0
        for character in trimmed {
            let scalars = character.unicodeScalars.count
            guard scalars <= maximumScalarsPerCharacter else {
                throw .characterTooComplex(scalars: scalars, maximum: maximumScalarsPerCharacter)
            }
            length += 1
        }
        guard length <= maximumLength else { throw .titleTooLong(length: length, maximum: maximumLength) }
        return trimmed
    }

    /// Whether `scalar` may not appear in a title.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: return (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        }
    }

    /// `text` with every scalar a title may not hold (control characters, line breaks,
    /// direction overrides) replaced by "�": what a terminal may be shown of a title read from a
    /// file, which no check of this program's has seen.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isForbidden) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isForbidden($0) ? "\u{FFFD}" : $0 }))
    }

    private static func trim(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    private static func name(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}": "a line break"
        case "\t": "a tab"
        case "\u{1B}": "an escape character"
        default:
            "U+" + String(repeating: "0", count: max(0, 4 - String(scalar.value, radix: 16).count))
                + String(scalar.value, radix: 16, uppercase: true)
        }
    }
}
