extension GraphEventSource {
    /// The values of this source as an `AsyncSequence`.
    ///
    ///     for try await credits in wallet.credits.values() { render(credits) }
    ///
    /// - An `ObservableValue` yields its current value first, then every change; an
    ///   `EventChannel` yields what is sent after the call.
    /// - Buffering: values are delivered into the sequence's buffer on the sender's thread, so a
    ///   slow loop never blocks senders. The default policy `.unbounded` keeps every value; use
    ///   `.bufferingNewest(1)` to keep only the latest (usual for state), or
    ///   `.bufferingOldest(n)`.
    /// - `.finished` ends the loop; `.failed(error)` makes it throw `error`.
    /// - Ending the loop early (`break`, `return`, a thrown error), cancelling the task, or
    ///   dropping the sequence unused removes the observer from the source. Iterate it once.
    ///
    /// Thread safety: safe from any thread; the sequence is `Sendable`.
    /// Callbacks: none besides the sequence's own.
    /// - Complexity: O(1) to create; each value costs one buffer insertion.
    public func values(
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .unbounded
    ) -> GraphValues<Value> {
        GraphValues(bufferingPolicy: bufferingPolicy) { observeNonisolated($0) }
    }
}

/// The values of a source as an `AsyncSequence` that may throw the source's failure: what
/// `values()` returns. Iterate it with `for try await`, once.
///
/// An observation feeds it from the moment `values()` is called. It ends, and the observer
/// leaves the source, when the source terminates, when the loop ends early (`break`, `return`,
/// an error), when the iterating task is cancelled, or when the sequence is dropped unused.
///
/// Thread safety: `Sendable`; the iterator belongs to the loop that made it.
/// Callbacks: none.
public struct GraphValues<Element: Sendable>: AsyncSequence, Sendable {
    let stream: AsyncThrowingStream<Element, any Error>
    let observation: _StreamObservation

    init(
        bufferingPolicy: AsyncThrowingStream<Element, any Error>.Continuation.BufferingPolicy,
        observe: (@escaping @Sendable (GraphEvent<Element>) -> Void) -> SubscriptionToken
    ) {
        let observation = _StreamObservation()
        self.observation = observation
        stream = AsyncThrowingStream(bufferingPolicy: bufferingPolicy) { continuation in
            observation.start(
                observe { event in
                    switch event {
                    case .value(let value): continuation.yield(value)
                    case .finished: continuation.finish()
                    case .failed(let error): continuation.finish(throwing: error)
                    }
                })
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// The loop's iterator: ending the loop (dropping the iterator) ends the observation.
    ///
    /// Thread safety: use it from the loop that made it. Callbacks: none.
    /// - Complexity: O(1).
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), lifetime: _IteratorLifetime(observation))
    }

    /// Reads the buffered values in order, waiting when none is there.
    ///
    /// Thread safety: use it from one loop. Callbacks: none.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.Iterator
        let lifetime: _IteratorLifetime

        /// The next value; `nil` once the source finished; throws the source's failure.
        ///
        /// Thread safety: one loop. Callbacks: none.
        /// - Complexity: O(1), plus the wait for a value.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }
}

/// The observation behind a values sequence: cancelled once, by whichever comes first (the
/// stream's end, the iterator's end).
final class _StreamObservation: Sendable {
    private let token = GraphLock<(token: SubscriptionToken?, cancelled: Bool)>((nil, false))

    func start(_ token: SubscriptionToken) {
        let cancelled = self.token.withLock { state -> Bool in
            if !state.cancelled { state.token = token }
            return state.cancelled
        }
        if cancelled { token.cancel() }
    }

    func cancel() {
        let token = self.token.withLock { state -> SubscriptionToken? in
            state.cancelled = true
            defer { state.token = nil }
            return state.token
        }
        token?.cancel()  // with no lock held: the token's closure goes, with what it captured
    }
}

/// Held by a loop's iterator: when the loop ends (the iterator goes), the observation ends.
final class _IteratorLifetime: Sendable {
    let observation: _StreamObservation

    init(_ observation: _StreamObservation) {
        self.observation = observation
    }

    deinit {
        observation.cancel()
    }
}
