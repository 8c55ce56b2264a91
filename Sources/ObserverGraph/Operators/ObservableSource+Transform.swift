/// Single-input operators: each returns a `DerivedValue` whose node shows in `GraphSnapshot`
/// under the operator's name.
///
/// Common rules (each operator's doc says only what differs):
/// - Operator closures are `@Sendable` and run where the change propagates: on the thread of the
///   send that started it (or of the pass running when it arrived), with no lock held, one call
///   at a time per operator. They should be pure: they also run once when the operator is built,
///   on the value it starts from.
/// - Termination passes through: `finished` finishes the result, `failed(error)` fails it.
/// - Thread safety: safe from any thread. Callbacks: the closure, as above.
/// - Complexity: building is O(1) plus one call for the starting value; each event costs one call
///   plus the delivery to the result's observers.
extension ObservableSource {
    /// A derived value built on this source with `handle` as its operator.
    @inlinable
    func _derive<Output: Sendable>(
        _ name: String, replays: Bool? = nil,
        _ handle: @escaping @Sendable (_OperatorNode<Output>, GraphEvent<Value>, _Pass?) -> Void
    ) -> DerivedValue<Output> {
        let parent = _operatorNodeForNewEdge()
        return DerivedValue(name, upstreams: [self], inputs: [parent], replays: replays ?? parent.replays) {
            parent.attach($0, handle)
        }
    }

    /// Each value transformed by `transform` (Combine's and RxSwift's `map`).
    ///
    ///     let label = credits.map { "\($0) credits" }
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func map<Output: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Output
    ) -> DerivedValue<Output> {
        _derive("map") { node, event, pass in
            node.emit(event.mapValue(transform), pass)
        }
    }

    /// The non-`nil` results of `transform` (Combine's `compactMap`). Derived from a value
    /// source, it has no `value` until a first non-`nil` result.
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func compactMap<Output: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Output?
    ) -> DerivedValue<Output> {
        _derive("compactMap") { node, event, pass in
            switch event {
            case .value(let value): if let output = transform(value) { node.emit(.value(output), pass) }
            case .finished: node.emit(.finished, pass)
            case .failed(let error): node.emit(.failed(error), pass)
            }
        }
    }

    /// The values for which `isIncluded` is true (Combine's `filter`, RxSwift's `filter`).
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> DerivedValue<Value> {
        _derive("filter") { node, event, pass in
            if case .value(let value) = event, !isIncluded(value) { return }
            node.emit(event, pass)
        }
    }

    /// The values that differ from the previous value passed on, by `isDuplicate` (Combine's
    /// `removeDuplicates(by:)`, RxSwift's `distinctUntilChanged`).
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (Value, Value) -> Bool
    ) -> DerivedValue<Value> {
        let previous = _OperatorCell<Value?>(nil)
        return _derive("removeDuplicates") { node, event, pass in
            if case .value(let value) = event {
                if let last = previous.value, isDuplicate(last, value) { return }
                previous.value = value
            }
            node.emit(event, pass)
        }
    }

    /// Each value folded into an accumulator with `next`, starting from `initial`; passes on
    /// every new accumulator (Combine's and RxSwift's `scan`).
    ///
    ///     let taps = EventChannel<Void>()
    ///     let count = taps.scan(0) { count, _ in count + 1 }
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func scan<Result: Sendable>(
        _ initial: Result, _ next: @escaping @Sendable (Result, Value) -> Result
    ) -> DerivedValue<Result> {
        let accumulator = _OperatorCell(initial)
        return _derive("scan") { node, event, pass in
            switch event {
            case .value(let value):
                accumulator.value = next(accumulator.value, value)
                node.emit(.value(accumulator.value), pass)
            case .finished: node.emit(.finished, pass)
            case .failed(let error): node.emit(.failed(error), pass)
            }
        }
    }

    /// `value` first, then this source's values (Combine's `prepend`, RxSwift's `startWith`).
    /// The result is a value that starts as `value` and replays its latest value to new
    /// observers, so `taps.prepend(0)` holds 0 until the first tap. On a value source, the
    /// source's current value comes right after `value`, so the result starts with the source's
    /// value. Unlike Combine's `prepend`, which sends its values to each subscriber as it
    /// subscribes, the result is one value shared by every observer: one starting value.
    ///
    /// Thread safety: safe from any thread. Callbacks: none of its own.
    /// - Complexity: O(1) to build; O(1) per event.
    public func prepend(_ value: Value) -> DerivedValue<Value> {
        _prepend([value])
    }

    /// The last of `values` first, then this source's values: see `prepend(_:)` with one value.
    /// The values before the last one are passed on while the result is built, before anything
    /// can observe it, so nothing ever sees them.
    ///
    /// Thread safety: safe from any thread. Callbacks: none of its own.
    /// - Complexity: O(values) to build; O(1) per event.
    @available(
        *, deprecated,
        message: "the result is one shared value: only the last value is ever seen; pass that one alone"
    )
    public func prepend(_ values: Value...) -> DerivedValue<Value> {
        _prepend(values)
    }

    /// `values`, then this source's values, as the result's start (see `prepend(_:)`).
    func _prepend(_ values: [Value]) -> DerivedValue<Value> {
        let parent = _operatorNodeForNewEdge()
        return DerivedValue("prepend", upstreams: [self], inputs: [parent], replays: true) { node in
            for value in values { node.emit(.value(value), nil) }
            parent.attach(node) { node, event, pass in node.emit(event, pass) }
        }
    }
}

extension ObservableSource where Value: Equatable {
    /// The values that differ (`!=`) from the previous value passed on (Combine's
    /// `removeDuplicates()`, RxSwift's `distinctUntilChanged()`).
    ///
    /// Thread safety: safe from any thread. Callbacks: the closure, on the thread propagating the
    /// change, with no lock held (see the common rules above).
    /// - Complexity: O(1) per event plus one call of the closure.
    @inlinable
    public func removeDuplicates() -> DerivedValue<Value> {
        removeDuplicates(by: ==)
    }
}

extension GraphEvent {
    /// The same event with its value transformed.
    @inlinable
    func mapValue<Output>(_ transform: (Value) -> Output) -> GraphEvent<Output> {
        switch self {
        case .value(let value): return .value(transform(value))
        case .finished: return .finished
        case .failed(let error): return .failed(error)
        }
    }
}

/// State of one operator, touched only by the thread handling its events (one at a time).
@usableFromInline
final class _OperatorCell<Value>: @unchecked Sendable {
    /// Exclusivity is unchecked: one thread at a time handles an operator's events.
    @exclusivity(unchecked) @usableFromInline var value: Value

    @usableFromInline init(_ value: Value) {
        self.value = value
    }
}
