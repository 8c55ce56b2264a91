/// How many columns of a terminal text takes, measured per grapheme cluster (what people see
/// as one character), so that tables of mixed Latin, CJK and emoji text line up.
///
/// A cluster takes 2 columns when it is East Asian Wide or Fullwidth (CJK ideographs, kana,
/// Hangul, fullwidth forms), an emoji shown as emoji (emoji presentation, a `U+FE0F` variation
/// selector, a skin tone, a ZWJ sequence such as 👩‍💻, a flag such as 🇯🇵); 0 when it is only
/// combining marks, format or control characters; 1 otherwise. Emoji facts come from the
/// standard library's `Unicode.Scalar.Properties`; the wide ranges from a compact table of the
/// Unicode East Asian Width property (W and F), without emoji, which the properties cover.
public enum DisplayWidth {
    /// The columns `character` takes.
    ///
    /// Thread safety: a pure function. Callbacks: none.
    /// - Complexity: O(scalars in the cluster + log(table size)).
    public static func columns(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let properties = first.properties
        if scalars.count > 1 && properties.isEmoji
            && scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D || isSkinTone($0) })
        {
            return 2
        }
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        return properties.isEmojiPresentation || isWide(first.value) ? 2 : 1
    }

    /// The columns `text` takes: the sum over its grapheme clusters.
    ///
    /// Thread safety: a pure function. Callbacks: none.
    /// - Complexity: O(length of `text`).
    public static func columns(_ text: String) -> Int {
        // Printable ASCII, one column a byte: most titles, and every other cell of a table,
        // measured without breaking the text into clusters.
        if let width = printableASCIIWidth(text) { return width }
        return text.reduce(0) { $0 + columns($1) }
    }

    /// The byte count of `text` when every byte is printable ASCII (U+0020 to U+007E), each one
    /// cluster of one column; `nil` otherwise.
    static func printableASCIIWidth(_ text: String) -> Int? {
        var count = 0
        for byte in text.utf8 {
            guard (0x20...0x7E).contains(byte) else { return nil }
            count += 1
        }
        return count
    }

    /// `text` made to fit in `width` columns: control characters (which a table must not
    /// print) become "�"; text that is too wide is cut at a grapheme cluster boundary and ends
    /// with "…", so it takes at most `width` columns (one less when a wide character would
    /// have straddled the limit).
    ///
    /// Thread safety: a pure function. Callbacks: none.
    /// - Complexity: O(length of `text`).
    public static func truncated(_ text: String, toWidth width: Int) -> String {
        if let length = printableASCIIWidth(text) {
            guard length > width else { return text }
            guard width > 0 else { return "" }
            return String(decoding: text.utf8.prefix(width - 1), as: UTF8.self) + "…"
        }
        let clean = ItemTitle.printable(text)
        guard columns(clean) > width else { return clean }
        guard width > 0 else { return "" }
        var result = ""
        var used = 0
        for character in clean {
            let next = columns(character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }

    /// `text` followed by spaces up to `width` columns (unchanged when already that wide).
    ///
    /// Thread safety: a pure function. Callbacks: none.
    /// - Complexity: O(length of `text` + `width`).
    public static func padded(_ text: String, toWidth width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - columns(text)))
    }

    private static func isSkinTone(_ scalar: Unicode.Scalar) -> Bool {
        (0x1_F3FB...0x1_F3FF).contains(scalar.value)
    }

    /// Whether a scalar is East Asian Wide or Fullwidth (binary search in `wideRanges`).
    static func isWide(_ value: UInt32) -> Bool {
        var low = 0
        var high = wideRanges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = wideRanges[middle]
            if value < range.lowerBound {
                high = middle - 1
            } else if value > range.upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// East Asian Width W and F blocks (sorted, merged across unassigned gaps), emoji aside.
    static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo initial consonants
        0x2329...0x232A,  // angle brackets
        0x2E80...0x303E,  // CJK radicals, Kangxi radicals, CJK symbols and punctuation, ideographic space
        0x3041...0x33FF,  // kana, Bopomofo, Hangul compatibility Jamo, enclosed CJK
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x1_6FE0...0x1_6FF1,  // ideographic symbols and punctuation
        0x1_7000...0x1_8D08,  // Tangut, Khitan small script
        0x1_AFF0...0x1_B2FF,  // kana extensions and supplements, Nushu
        0x1_F200...0x1_F2FF,  // enclosed ideographic supplement
        0x2_0000...0x2_FFFD,  // CJK extensions B to F, compatibility supplement (plane 2)
        0x3_0000...0x3_FFFD,  // CJK extensions G and H (plane 3)
    ]
}
