/// What an observable value or event channel delivers: a value, or the end of the stream.
///
/// `finished` and `failed` are terminal: after either, the source delivers nothing more.
/// An error that the app can recover from is not a termination. Send it as a value instead, as a
/// `Result` or a `ViewState`:
///
///     let results = EventChannel<Result<[Job], FetchError>>()
///     results.send(.failure(.offline))   // observers show it; the stream goes on
///
/// Thread safety: a value type; `Sendable` when `Value` is.
public enum GraphEvent<Value> {
    /// A value.
    case value(Value)
    /// The source completed normally. Nothing follows.
    case finished
    /// The source failed with an error. Nothing follows.
    case failed(any Error)

    /// The value, if this event carries one.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// Whether this event ends the stream (`finished` or `failed`).
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var isTerminal: Bool {
        if case .value = self { return false }
        return true
    }
}

extension GraphEvent: Sendable where Value: Sendable {}

extension GraphEvent: Equatable where Value: Equatable {
    /// Values compare by `==`; `finished` equals `finished`; two failures are equal when their
    /// errors have the same type and the same `String(reflecting:)` text. (Errors have no
    /// equality of their own; this keeps recorded histories comparable in tests.)
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1) plus the cost of comparing the values or describing the errors.
    public static func == (lhs: GraphEvent, rhs: GraphEvent) -> Bool {
        switch (lhs, rhs) {
        case (.value(let a), .value(let b)): return a == b
        case (.finished, .finished): return true
        case (.failed(let a), .failed(let b)):
            return type(of: a) == type(of: b) && String(reflecting: a) == String(reflecting: b)
        default: return false
        }
    }
}

/// The state of a screen that shows data which is loaded, may be empty, or may have failed in a
/// way the user can recover from (retry). Deliver it through an `ObservableValue<ViewState<T>>`:
/// a recoverable error is a state to show, not the end of the stream.
///
///     let state = ObservableValue<ViewState<[Item]>>(.loading)
///     state.value = items.isEmpty ? .empty : .result(items)
///     state.value = .error(StoreError.unreadable)   // the stream goes on; a retry can follow
///
/// Thread safety: a value type; `Sendable` when `Value` is.
public enum ViewState<Value> {
    /// Data is being loaded.
    case loading
    /// Loading succeeded with data to show.
    case result(Value)
    /// Loading succeeded and there is nothing to show.
    case empty
    /// Loading failed with an error the user can recover from.
    case error(any Error)

    /// `.result(value)` or `.empty` for a successful load (empty when `isEmpty(value)`), and
    /// `.error` for a failed one.
    ///
    /// Thread safety: pure. Callbacks: `isEmpty`, on the calling thread.
    /// - Complexity: O(1) plus the cost of `isEmpty`.
    public init<Failure: Error>(_ result: Result<Value, Failure>, isEmpty: (Value) -> Bool) {
        switch result {
        case .success(let value): self = isEmpty(value) ? .empty : .result(value)
        case .failure(let error): self = .error(error)
        }
    }

    /// The data, if this state carries any.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var result: Value? {
        if case .result(let value) = self { return value }
        return nil
    }
}

extension ViewState where Value: Collection {
    /// `.result(value)`, or `.empty` when the collection is empty, or `.error`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public init<Failure: Error>(_ result: Result<Value, Failure>) {
        self.init(result, isEmpty: \.isEmpty)
    }
}

extension ViewState: Sendable where Value: Sendable {}

extension ViewState: Equatable where Value: Equatable {
    /// Compares like `GraphEvent`: errors by type and `String(reflecting:)` text.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1) plus the cost of comparing the values.
    public static func == (lhs: ViewState, rhs: ViewState) -> Bool {
        switch (lhs, rhs) {
        case (.loading, .loading), (.empty, .empty): return true
        case (.result(let a), .result(let b)): return a == b
        case (.error(let a), .error(let b)):
            return type(of: a) == type(of: b) && String(reflecting: a) == String(reflecting: b)
        default: return false
        }
    }
}
