/// Which items belong in the queue on a given day: a replaceable value.
///
/// The default is the rule of the source document: an item is queued while it is done and its
/// day of the week is the manager's current day; `done` becoming false, or the day becoming
/// another day, takes it out.
public struct QueueRule: Sendable {
    /// A short name, for people.
    public let name: String
    private let test: @Sendable (QueueItemSnapshot, Weekday) -> Bool
    private let explanation: (@Sendable (QueueItemSnapshot, Weekday) -> String)?

    /// A rule named `name` that keeps an item when `qualifies(item, currentDay)` is true.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(
        name: String, qualifies: @escaping @Sendable (QueueItemSnapshot, Weekday) -> Bool,
        explainsRefusal: (@Sendable (QueueItemSnapshot, Weekday) -> String)? = nil
    ) {
        self.name = name
        self.test = qualifies
        self.explanation = explainsRefusal
    }

    /// Why `item` does not qualify on `day`, for people: the rule's own explanation, or its name.
    ///
    /// Thread safety: safe from any thread. Callbacks: the rule's explanation closure.
    /// - Complexity: that of the closure.
    public func reasonNotQueued(_ item: QueueItemSnapshot, on day: Weekday) -> String {
        explanation?(item, day) ?? "does not meet the rule \"\(name)\""
    }

    /// Whether `item` belongs in the queue when the current day is `day`.
    ///
    /// Thread safety: safe from any thread. Callbacks: the rule's closure.
    /// - Complexity: that of the closure.
    public func qualifies(_ item: QueueItemSnapshot, on day: Weekday) -> Bool {
        test(item, day)
    }

    /// The source document's rule: done, and due on the current day.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public static let doneToday = QueueRule(
        name: "done and due today",
        qualifies: { item, day in item.done && item.dayOfTheWeek == day },
        explainsRefusal: { item, day in
            item.done ? "due \(item.dayOfTheWeek), today is \(day)" : "not done"
        })
}
