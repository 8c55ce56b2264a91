import ObserverGraph

/// The stable identity of a queue item: a small number, shown to people and used by commands.
public struct ItemID: Hashable, Codable, Comparable, Sendable, CustomStringConvertible {
    /// The number.
    public let rawValue: Int

    /// The item id `rawValue`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    /// Decodes the bare number.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    /// Encodes the bare number.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Orders by number.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#3`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String { "#\(rawValue)" }
}

/// What changed on an item.
public enum QueueItemChange: Equatable, Sendable, CustomStringConvertible {
    /// `done` went from one value to the other.
    case done(from: Bool, to: Bool)
    /// `dayOfTheWeek` went from one day to another.
    case dayOfTheWeek(from: Weekday, to: Weekday)

    /// For people: `done became false`, `day became Wednesday`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .done(_, let to): "done became \(to)"
        case .dayOfTheWeek(_, let to): "day became \(to)"
        }
    }
}

/// Observes queue items: told about every change of `done` and `dayOfTheWeek`, in order.
public protocol QueueItemObserver: GraphObserver {
    /// `item` changed; called with no lock held, where the observer was added
    /// (`addObserver(_:isolation:)`): for an observer added from nonisolated code, on the thread
    /// that set the value, before the setter returns; for one added from the main actor, there
    /// (before the setter returns when it was set on the main actor, on the actor's next turn
    /// otherwise); for one added from another actor, on that actor's next turn.
    func item(_ item: QueueItem, didChange change: QueueItemChange)
}

/// An item of the daily queue: a title, a stable id, and two observable properties, `done` and
/// `dayOfTheWeek`.
///
/// The item is itself observable: it forwards every change of its two values, in order, to its
/// `QueueItemObserver`s (the queue manager subscribes to each item it queues). Views can also
/// observe `done` and `dayOfTheWeek` directly.
public final class QueueItem: GraphObservable, Sendable {
    /// The node holding this item's observers.
    public let graphNode = GraphNode()
    /// The stable identity.
    public let id: ItemID
    /// What to do.
    public let title: String
    /// Whether the item is done. The default queue rule keeps only done items of the day.
    public let done: ObservableValue<Bool>
    /// The day the item belongs to.
    public let dayOfTheWeek: ObservableValue<Weekday>
    /// The 1-based position in the queue, or `nil` when the item is not queued.
    private let position: GraphLock<Int?>
    private let forwarding = TokenBag()

    /// An item with the given values.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init(id: ItemID, title: String, done: Bool, dayOfTheWeek: Weekday, queuePosition: Int? = nil) {
        self.id = id
        self.title = title
        self.done = ObservableValue(done, skipsEqualValues: true)
        self.dayOfTheWeek = ObservableValue(dayOfTheWeek, skipsEqualValues: true)
        self.position = GraphLock(queuePosition)
        forward(self.done) { .done(from: $0, to: $1) }
        forward(self.dayOfTheWeek) { .dayOfTheWeek(from: $0, to: $1) }
    }

    /// The 1-based position in the queue, or `nil` when not queued. Set by the queue manager.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public internal(set) var queuePosition: Int? {
        get { position.withLock { $0 } }
        set { position.withLock { $0 = newValue } }
    }

    /// The item's name in graph pictures: `#3 "Laundry"`. A character a title may not hold (a
    /// title read from a store file that another program wrote) is shown as "�", as in event
    /// lines.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(length of the title).
    public var graphDisplayName: String { "\(id) \"\(ItemTitle.printable(title))\"" }

    /// The item's values now, as a value.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var snapshot: QueueItemSnapshot {
        QueueItemSnapshot(id: id, title: title, done: done.value, dayOfTheWeek: dayOfTheWeek.value)
    }

    /// Posts each change of `value` (after its first, replayed value) to this item's
    /// `QueueItemObserver`s, each where it was added (see `QueueItemObserver`). The values
    /// deliver serially, and a post keeps each observer's order, so changes arrive in order.
    private func forward<Value: Sendable>(
        _ value: ObservableValue<Value>, as change: @escaping @Sendable (Value, Value) -> QueueItemChange
    ) {
        let previous = GraphLock<Value?>(nil)
        value.observeValuesNonisolated { [weak self] newValue in
            let old = previous.withLock { state in
                defer { state = newValue }
                return state
            }
            guard let self, let old else { return }
            let change = change(old, newValue)
            self.post(as: (any QueueItemObserver).self) { $0.item(self, didChange: change) }
        }
        .store(in: forwarding)
    }
}

/// An item's values at one moment: what views show and tests compare.
public struct QueueItemSnapshot: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The item's identity.
    public let id: ItemID
    /// The title.
    public let title: String
    /// Whether it was done.
    public let done: Bool
    /// Its day.
    public let dayOfTheWeek: Weekday

    /// A snapshot with these values.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(id: ItemID, title: String, done: Bool, dayOfTheWeek: Weekday) {
        self.id = id
        self.title = title
        self.done = done
        self.dayOfTheWeek = dayOfTheWeek
    }

    /// `#3 "Laundry"`. A character a title may not hold (a title read from a store file that
    /// another program wrote: an escape sequence, a line break) is shown as "�", so that an
    /// event line never drives the terminal or splits in two.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(length of the title).
    public var description: String { "\(id) \"\(ItemTitle.printable(title))\"" }
}
