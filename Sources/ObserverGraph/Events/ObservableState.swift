import Dispatch

/// A value that cannot fail: an `ObservableValue` with no `fail(_:)` (the role of RxSwift's
/// `BehaviorRelay` and Combine's `CurrentValueSubject<Value, Never>`). The type says so, so its
/// `values()` is a non-throwing sequence: `for await` with no `try`.
///
///     let credits = ObservableState(0)
///     let task = Task {
///         for await value in credits.values() { print(value) }   // no `try`: it cannot fail
///     }
///
/// Everything else is `ObservableValue`'s: a new observer receives the current value at once,
/// then every change; `update` never loses a concurrent change; closures written on an actor
/// run on it; operators (`map`, `combineLatest`, …) apply. It can still end with `finish()`,
/// which ends every loop over its values. Its events are `GraphEvent`s, whose `.failed` case it
/// never delivers.
///
/// Thread safety: `Sendable`; every member is safe from any thread, as `ObservableValue`'s.
public final class ObservableState<Value: Sendable>: ObservableSource, @unchecked Sendable {
    // Unchecked: the only stored property is a `Sendable` value of the kit; no `fail(_:)` is
    // ever called on it, which is what makes the stream below non-throwing.
    @usableFromInline let storage: ObservableValue<Value>

    /// A state that delivers every set, equal or not.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init(_ initialValue: Value) {
        storage = ObservableValue(initialValue)
    }

    /// A state that, with `skipsEqualValues`, does not deliver a set that leaves it equal (`==`)
    /// to what it was.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init(_ initialValue: Value, skipsEqualValues: Bool) where Value: Equatable {
        storage = ObservableValue(initialValue, skipsEqualValues: skipsEqualValues)
    }

    /// The node that holds this state's observers (shared with the value inside).
    ///
    /// Thread safety: immutable. Callbacks: none.
    /// - Complexity: O(1).
    public var graphNode: GraphNode { storage.graphNode }

    /// Plumbing: the node a new operator edge attaches to (see
    /// `ObservableSource._operatorNodeForNewEdge()`). Provided by the kit; do not call it.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: expected O(1).
    public func _operatorNodeForNewEdge() -> _OperatorNode<Value> { storage._operatorNodeForNewEdge() }

    /// The current value; setting it delivers the new value, as `ObservableValue.value` (a set
    /// counts as made from nonisolated code, except on the main actor: on another actor, write
    /// `set(_:)`). `value += 1` reads, then sets: from several threads at once, write
    /// `update { $0 += 1 }`, which is atomic.
    ///
    /// Thread safety: safe from any thread. A set after `finish()` is ignored.
    /// Callbacks: observers' handlers, for a set.
    /// - Complexity: O(1) to get; a set is O(n) for the delivery to n observers.
    @inlinable
    public var value: Value {
        get { storage.value }
        set { storage.value = newValue }
    }

    /// Sets the value from the caller's actor, as `ObservableValue.set(_:isolation:)`.
    ///
    /// Thread safety: safe from any thread or actor. Callbacks: observers' handlers.
    /// - Complexity: O(1) plus the delivery to n observers, O(n).
    @inlinable
    public func set(_ newValue: Value, isolation: isolated (any Actor)? = #isolation) {
        storage.set(newValue, isolation: isolation)
    }

    /// Changes the value with `body` atomically, as `ObservableValue.update(isolation:_:)`:
    /// concurrent updates are never lost; throwing from `body` declines the change, and the
    /// error is thrown again with its type.
    ///
    /// Thread safety: safe from any thread or actor.
    /// Callbacks: `body` (one or more times), then observers' handlers for the new value.
    /// - Returns: what `body` returned on the run that was committed.
    /// - Complexity: O(1) per attempt plus the delivery to n observers, O(n).
    @inlinable @discardableResult
    public func update<Result, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.update(isolation: isolation, body)
    }

    /// Ends the state: observers receive `.finished`, then are removed; loops over `values()`
    /// end. Later sets are ignored.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers (`.finished`).
    /// - Returns: `false` (and does nothing) if it had already finished.
    /// - Complexity: O(n) for the delivery to n observers.
    @discardableResult
    public func finish(isolation: isolated (any Actor)? = #isolation) -> Bool {
        storage.finish(isolation: isolation)
    }

    /// Whether `finish()` was called.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var isFinished: Bool {
        storage.terminalEvent != nil
    }

    /// Observes the events with a closure that runs on the caller's actor, as
    /// `GraphEventSource.observe(isolation:_:)`.
    ///
    /// Thread safety: as `GraphEventSource.observe(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only: the current value first, then every change,
    /// then `.finished` if the state finishes (never `.failed`).
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `GraphEventSource.observe(isolation:_:)`.
    @inlinable
    public func observe(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        storage.observe(isolation: isolation, handler)
    }

    /// Observes the values with a closure that runs on the caller's actor, as
    /// `GraphEventSource.observeValues(isolation:_:)`.
    ///
    /// Thread safety: as `GraphEventSource.observe(isolation:_:)`.
    /// Callbacks: `handler` for the current value, then for each change, on `isolation` only.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `GraphEventSource.observe(isolation:_:)`.
    @inlinable
    public func observeValues(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        storage.observeValues(isolation: isolation, handler)
    }

    /// Observes the events with a `@Sendable` closure run asynchronously on `queue`, as
    /// `GraphEventSource.observe(on:_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler`, on `queue`.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1); each delivery is one `queue.async`.
    @inlinable
    public func observe(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        storage.observe(on: queue, handler)
    }

    /// Observes the values with a `@Sendable` closure run asynchronously on `queue`, as
    /// `GraphEventSource.observeValues(on:_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler` for each value, on `queue`.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1); each delivery is one `queue.async`.
    @inlinable
    public func observeValues(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        storage.observeValues(on: queue, handler)
    }

    /// Observes the events with a `@Sendable` closure called on the delivering thread, as
    /// `GraphEventSource.observeNonisolated(_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler`, on the delivering thread.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1).
    @inlinable
    public func observeNonisolated(
        _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        storage.observeNonisolated(handler)
    }

    /// Observes the values with a `@Sendable` closure called on the delivering thread, as
    /// `GraphEventSource.observeValuesNonisolated(_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler` for each value.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1).
    @inlinable
    public func observeValuesNonisolated(
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        storage.observeValuesNonisolated(handler)
    }

    /// The values as a non-throwing `AsyncSequence`: the current value first, then every
    /// change; `finish()` ends the loop. Iterate it with `for await`, no `try`, once.
    ///
    /// The observation starts when this is called (create the sequence where it should start).
    /// Senders never wait for the loop: values go into the sequence's buffer (`.unbounded` keeps
    /// every value; `.bufferingNewest(1)` keeps the latest). Ending the loop early, cancelling
    /// the task or dropping the sequence unused removes the observer. Taking the observer out of
    /// the state's list (`removeObserver(_:)`, `removeAllObservers()`) ends the observation: the
    /// loop reads what is buffered, then ends. Only the first loop over the sequence reads; a
    /// later one ends at once, with no value.
    ///
    /// Thread safety: safe from any thread; the sequence is `Sendable`.
    /// Callbacks: none besides the sequence's own.
    /// - Complexity: O(1) to create; each value costs one buffer insertion.
    public func values(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> ObservableStateValues<Value> {
        ObservableStateValues(bufferingPolicy: bufferingPolicy) { storage._observeStream($0) }
    }
}

/// The values of an `ObservableState` as an `AsyncSequence` that cannot throw: what its
/// `values()` returns. Iterate it with `for await` (no `try`), once.
///
/// It ends, and the observer leaves the state, when the state finishes, when the loop ends early,
/// when the iterating task is cancelled, or when the sequence is dropped unused. Taken out of the
/// state's observer list, it ends too: the loop reads what is buffered, then ends. Only the first
/// loop over it reads; a later one ends at once.
///
/// Thread safety: `Sendable`; the iterator belongs to the loop that made it.
/// Callbacks: none.
public struct ObservableStateValues<Element: Sendable>: AsyncSequence, Sendable {
    let stream: AsyncStream<Element>
    let observation: _StreamObservation

    init(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        observe: (@escaping @Sendable (GraphEvent<Element>) -> Void) -> SubscriptionToken
    ) {
        let observation = _StreamObservation()
        self.observation = observation
        stream = AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            // Set first, as in `GraphValues`: a finished state replays `.finished` at once.
            continuation.onTermination = { _ in observation.cancel() }
            let feed = _StreamFeed(.plain(continuation))
            observation.start(observe { event in feed.feed(event) })
        }
    }

    /// The loop's iterator. The first one made reads the values, and ending its loop (dropping
    /// it) ends the observation; any later one has nothing to read.
    ///
    /// Thread safety: use it from the loop that made it. Callbacks: none.
    /// - Complexity: O(1).
    public func makeAsyncIterator() -> Iterator {
        guard observation.claimReader() else { return Iterator(base: nil, lifetime: nil) }
        return Iterator(base: stream.makeAsyncIterator(), lifetime: _IteratorLifetime(observation))
    }

    /// Reads the buffered values in order, waiting when none is there; never throws.
    ///
    /// Thread safety: use it from one loop. Callbacks: none.
    public struct Iterator: AsyncIteratorProtocol {
        /// `nil` for a loop that is not the sequence's first: it reads nothing.
        var base: AsyncStream<Element>.Iterator?
        let lifetime: _IteratorLifetime?

        /// The next value; `nil` once the state finished or the observation ended (and always,
        /// for a loop that is not the sequence's first).
        ///
        /// Thread safety: one loop. Callbacks: none.
        /// - Complexity: O(1), plus the wait for a value.
        public mutating func next() async -> Element? {
            await base?.next()
        }
    }
}
