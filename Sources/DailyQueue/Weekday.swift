/// A day of the week, as the queue manager's "current day" and each item's `dayOfTheWeek`.
public enum Weekday: Int, CaseIterable, Codable, Sendable, Comparable, CustomStringConvertible {
    case monday = 1
    case tuesday, wednesday, thursday, friday, saturday, sunday

    /// Parses a day name: full (`Tuesday`), three letters (`tue`) or a number (1 = Monday … 7 =
    /// Sunday), any capitalization. `nil` for anything else.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init?(parsing text: String) {
        let key = text.lowercased()
        if let number = Int(key), let day = Weekday(rawValue: number) {
            self = day
            return
        }
        guard
            let day = Weekday.allCases.first(where: {
                $0.name.lowercased() == key || $0.shortName.lowercased() == key
            })
        else { return nil }
        self = day
    }

    /// The day's English name, e.g. `Tuesday`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var name: String {
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][rawValue - 1]
    }

    /// The three-letter name, e.g. `Tue`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var shortName: String { String(name.prefix(3)) }

    /// The English name.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String { name }

    /// Monday first.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}
