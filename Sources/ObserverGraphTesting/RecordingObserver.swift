import ObserverGraph

/// An observer that records everything it is told, each at the virtual step it happened.
///
/// It works with both layers of the kit:
/// - **Values and events.** `record(_:)` with an `ObservableValue` or `EventChannel` observes it
///   and records every `GraphEvent` it delivers, until `cancel()` or deinit.
/// - **The core.** It is a `GraphTrackingObserver`: subscribe it to any `GraphObservable` and it
///   records its `didSubscribe(to:)` and `didUnsubscribe(from:)` callbacks (with the observable's
///   `graphDisplayName`). To record your own broadcast messages, conform it to your observer
///   protocol in an extension and call `record(_:)` with an event:
///
///         extension RecordingObserver: WalletObserver where Value == Int {
///             func creditsChanged(to credits: Int) { record(.value(credits)) }
///         }
///
/// The history is `Equatable` when `Value` is, and turns into a marble row with `marbleRow`.
/// For a recorder of callbacks only, use `RecordingObserver<Never>`.
///
/// Thread safety: `Sendable`; it may be told things from any thread. Each entry is stamped with
/// the clock's step when it arrives.
public final class RecordingObserver<Value: Sendable>: GraphTrackingObserver, Sendable {
    /// The node that lists this recorder's subscriptions (it is a tracking observer).
    public let graphNode = GraphNode()
    /// The clock that stamps every entry.
    public let clock: VirtualClock
    /// Its name in graph snapshots, and the default label of its marble row.
    public let graphDisplayName: String
    private let state = GraphLock(_RecorderState<Value>())

    /// A recorder that stamps entries with `clock`'s current step.
    ///
    /// - Parameters:
    ///   - clock: the clock whose current step stamps every entry.
    ///   - name: the label of its marble row and its name in graph snapshots; by default its type
    ///     name and a short id.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init(clock: VirtualClock, name: String? = nil) {
        self.clock = clock
        graphDisplayName = name ?? "RecordingObserver<\(Value.self)>@" + ObserverID(graphNode).shortID
    }

    /// Everything recorded so far, in order.
    ///
    /// Thread safety: safe from any thread; a consistent copy. Callbacks: none.
    /// - Complexity: O(n), n = entries.
    public var history: [Recorded<Value>] {
        state.withLock { $0.history }
    }

    /// The recorded events (values and termination), without steps or callbacks.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(n), n = entries.
    public var events: [GraphEvent<Value>] {
        history.compactMap { entry in
            if case .event(let event) = entry.entry { return event }
            return nil
        }
    }

    /// Records `event` at the clock's current step.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: amortized O(1).
    public func record(_ event: GraphEvent<Value>) {
        append(.event(event))
    }

    /// Observes `source` and records each event it delivers, at the step it arrives. An
    /// `ObservableValue` delivers its current value at once.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: the source delivers to this recorder from then on.
    /// - Complexity: expected O(1), plus what the source delivers meanwhile.
    public func record(_ source: GraphEventSource<Value>) {
        let token = source.observeNonisolated { [weak self] event in self?.record(event) }
        state.withLock { $0.tokens.append(token) }
    }

    /// Stops recording every source passed to `record(_:)`; graph subscriptions stay.
    ///
    /// Thread safety: safe from any thread. Callbacks: none (see `SubscriptionToken.cancel()`).
    /// - Complexity: O(n), n = sources.
    public func cancel() {
        let tokens = state.withLock { state in
            defer { state.tokens = [] }
            return state.tokens
        }
        for token in tokens { token.cancel() }
    }

    /// Records `.subscribed(to:)` with the observable's display name.
    ///
    /// Thread safety: safe from any thread. Callbacks: reads `observable.graphDisplayName`.
    /// - Complexity: amortized O(1) plus the cost of the name.
    public func didSubscribe(to observable: any GraphObservable) {
        append(.subscribed(to: observable.graphDisplayName))
    }

    /// Records `.unsubscribed(from:)` with the observable's display name.
    ///
    /// Thread safety: safe from any thread. Callbacks: reads `observable.graphDisplayName`.
    /// - Complexity: amortized O(1) plus the cost of the name.
    public func didUnsubscribe(from observable: any GraphObservable) {
        append(.unsubscribed(from: observable.graphDisplayName))
    }

    /// The history as a marble row: values as `symbol` shows them, `|` and `X` for termination,
    /// `^` and `!` for subscription callbacks. The row ends right after a `|` or `X` when one was
    /// recorded, and at the clock's current step otherwise. A clock at `Int.max` (advanced by
    /// `.max`) gives a row of `Int.max` steps, whose last step holds the events recorded at
    /// `Int.max - 1` and `Int.max` (see `MarbleEvent.maximumStep`).
    ///
    ///     let row = recorder.marbleRow { $0 ? "T" : "F" }
    ///
    /// - Parameters:
    ///   - label: the row's label; by default the recorder's name.
    ///   - symbol: the text of a value: one character, or any text (shown in brackets).
    ///
    /// Thread safety: safe from any thread. Callbacks: `symbol`, on this thread, with no lock held.
    /// - Complexity: O(n log n), n = entries.
    public func marbleRow(label: String? = nil, symbol: (Value) -> String) -> MarbleRow {
        let history = self.history
        let now = clock.now
        var events: [MarbleEvent] = []
        var terminated = false
        for entry in history {
            let marble: MarbleSymbol
            switch entry.entry {
            case .event(.value(let value)): marble = .value(symbol(value))
            case .event(.finished): marble = .finished
            case .event(.failed): marble = .failed
            case .subscribed: marble = .subscribed
            case .unsubscribed: marble = .unsubscribed
            }
            if case .event(let event) = entry.entry, event.isTerminal { terminated = true }
            events.append(MarbleEvent(marble, at: entry.step))
        }
        // Saturating: a clock advanced by `.max` stands at `Int.max`, and a row cannot be longer.
        let length = terminated ? 0 : now == .max ? .max : now + 1
        return MarbleRow(label: label ?? graphDisplayName, length: length, events: events)
    }

    /// The history as a marble row, each value shown by `String(describing:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: the values' `description`.
    /// - Complexity: O(n log n), n = entries.
    public func marbleRow(label: String? = nil) -> MarbleRow {
        marbleRow(label: label) { String(describing: $0) }
    }

    private func append(_ entry: Recorded<Value>.Entry) {
        let step = clock.now
        state.withLock { $0.history.append(Recorded(step: step, entry: entry)) }
    }
}

private struct _RecorderState<Value: Sendable>: Sendable {
    var history: [Recorded<Value>] = []
    var tokens: [SubscriptionToken] = []
}

/// One entry of a `RecordingObserver`'s history: what happened, and at which virtual step.
///
///     #expect(recorder.history == [.value(true, at: 0), .value(false, at: 3), .finished(at: 5)])
///
/// Thread safety: a value type; `Sendable`. Callbacks: none.
public struct Recorded<Value: Sendable>: Sendable {
    /// What a recorder can be told.
    public enum Entry: Sendable {
        /// A delivered event: a value, or the end of the stream.
        case event(GraphEvent<Value>)
        /// `didSubscribe(to:)` with the observable's display name.
        case subscribed(to: String)
        /// `didUnsubscribe(from:)` with the observable's display name.
        case unsubscribed(from: String)
    }

    /// The clock's step when it was recorded.
    public let step: Int
    /// What was recorded.
    public let entry: Entry

    /// An entry at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init(step: Int, entry: Entry) {
        self.step = step
        self.entry = entry
    }

    /// `.event(.value(value))` at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func value(_ value: Value, at step: Int) -> Recorded {
        Recorded(step: step, entry: .event(.value(value)))
    }

    /// `.event(.finished)` at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func finished(at step: Int) -> Recorded {
        Recorded(step: step, entry: .event(.finished))
    }

    /// `.event(.failed(error))` at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func failed(_ error: any Error, at step: Int) -> Recorded {
        Recorded(step: step, entry: .event(.failed(error)))
    }

    /// `.subscribed(to: name)` at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func subscribed(to name: String, at step: Int) -> Recorded {
        Recorded(step: step, entry: .subscribed(to: name))
    }

    /// `.unsubscribed(from: name)` at `step`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func unsubscribed(from name: String, at step: Int) -> Recorded {
        Recorded(step: step, entry: .unsubscribed(from: name))
    }
}

extension Recorded.Entry: Equatable where Value: Equatable {}

extension Recorded: Equatable where Value: Equatable {}

extension Recorded: CustomStringConvertible {
    /// `value(5) at 3`, `finished at 4`, `subscribed(to: wallet) at 0`: for test failures.
    ///
    /// Thread safety: pure. Callbacks: the value's `description`.
    /// - Complexity: O(length of the text).
    public var description: String {
        switch entry {
        case .event(.value(let value)): return "value(\(value)) at \(step)"
        case .event(.finished): return "finished at \(step)"
        case .event(.failed(let error)): return "failed(\(error)) at \(step)"
        case .subscribed(let name): return "subscribed(to: \(name)) at \(step)"
        case .unsubscribed(let name): return "unsubscribed(from: \(name)) at \(step)"
        }
    }
}
