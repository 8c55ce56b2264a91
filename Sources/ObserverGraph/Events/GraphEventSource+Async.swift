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
    ///   dropping the sequence unused removes the observer from the source.
    /// - Taking the observer out of the source's list (`removeObserver(_:)`,
    ///   `removeAllObservers()`) ends the observation: the loop reads what is buffered, then
    ///   ends as at `.finished`. The removal returns once a value being put into the buffer on
    ///   another thread is in.
    /// - Iterate it once: only the first loop reads. A later loop over the same sequence ends at
    ///   once, with no value, whether the first is still running or ended.
    ///
    /// Thread safety: safe from any thread; the sequence is `Sendable`.
    /// Callbacks: none besides the sequence's own.
    /// - Complexity: O(1) to create; each value costs one buffer insertion.
    public func values(
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .unbounded
    ) -> GraphValues<Value> {
        GraphValues(bufferingPolicy: bufferingPolicy) { _observeStream($0) }
    }

    /// The observation behind `values()`: a nonisolated closure observer that ends when it is
    /// taken out of the observer list (see `_EventSink._endsOnRemoval`).
    final func _observeStream(
        _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        _join(mode: .nonisolated, drainer: nil, .events(handler), endsOnRemoval: true)
    }
}

/// The values of a source as an `AsyncSequence` that may throw the source's failure: what
/// `values()` returns. Iterate it with `for try await`, once.
///
/// An observation feeds it from the moment `values()` is called. It ends, and the observer
/// leaves the source, when the source terminates, when the loop ends early (`break`, `return`,
/// an error), when the iterating task is cancelled, or when the sequence is dropped unused. Taken
/// out of the source's observer list (`removeObserver(_:)`, `removeAllObservers()`), it ends
/// too: the loop reads what is buffered, then ends. Only the first loop over it reads; a later
/// one ends at once.
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
            // Set first: a terminated source replays its terminal event before `observe`
            // returns, and a handler set after the stream's end would never be called.
            continuation.onTermination = { _ in observation.cancel() }
            let feed = _StreamFeed(.throwing(continuation))
            observation.start(observe { event in feed.feed(event) })
        }
    }

    /// The loop's iterator. The first one made reads the values, and ending its loop (dropping
    /// it) ends the observation; any later one has nothing to read (see `GraphValues`).
    ///
    /// Thread safety: use it from the loop that made it. Callbacks: none.
    /// - Complexity: O(1).
    public func makeAsyncIterator() -> Iterator {
        guard observation.claimReader() else { return Iterator(base: nil, lifetime: nil) }
        return Iterator(base: stream.makeAsyncIterator(), lifetime: _IteratorLifetime(observation))
    }

    /// Reads the buffered values in order, waiting when none is there.
    ///
    /// Thread safety: use it from one loop. Callbacks: none.
    public struct Iterator: AsyncIteratorProtocol {
        /// `nil` for a loop that is not the sequence's first: it reads nothing.
        var base: AsyncThrowingStream<Element, any Error>.Iterator?
        let lifetime: _IteratorLifetime?

        /// The next value; `nil` once the source finished or the observation ended (and always,
        /// for a loop that is not the sequence's first); throws the source's failure.
        ///
        /// Thread safety: one loop. Callbacks: none.
        /// - Complexity: O(1), plus the wait for a value.
        public mutating func next() async throws -> Element? {
            try await base?.next()
        }
    }
}

/// What a values sequence's observer closure holds: it puts each event into the stream, and when
/// the closure goes (the observation ended, however it ended: a cancel, the source's end, its
/// removal from the observer list) it finishes the stream, so that no loop waits for an event
/// that can no longer come. Finishing a stream that already ended does nothing.
final class _StreamFeed<Element: Sendable>: Sendable {
    /// The stream's continuation: `GraphValues`' (which may throw) or `ObservableStateValues`'.
    enum Continuation: Sendable {
        case throwing(AsyncThrowingStream<Element, any Error>.Continuation)
        case plain(AsyncStream<Element>.Continuation)
    }

    let continuation: Continuation

    init(_ continuation: Continuation) {
        self.continuation = continuation
    }

    deinit {
        switch continuation {
        case .throwing(let continuation): continuation.finish()
        case .plain(let continuation): continuation.finish()
        }
    }

    /// One event into the stream: a value into its buffer; a terminal event ends it (with the
    /// error, where the stream can throw; a state never fails).
    func feed(_ event: GraphEvent<Element>) {
        switch (continuation, event) {
        case (.throwing(let continuation), .value(let value)): continuation.yield(value)
        case (.throwing(let continuation), .finished): continuation.finish()
        case (.throwing(let continuation), .failed(let error)): continuation.finish(throwing: error)
        case (.plain(let continuation), .value(let value)): continuation.yield(value)
        case (.plain(let continuation), .finished), (.plain(let continuation), .failed): continuation.finish()
        }
    }
}

/// The observation behind a values sequence: cancelled once, by whichever comes first (the
/// stream's end, the reading iterator's end); and whether a loop has claimed the stream.
final class _StreamObservation: Sendable {
    private let state = GraphLock<(token: SubscriptionToken?, cancelled: Bool, claimed: Bool)>(
        (nil, false, false))

    /// Whether the caller is the first to read (`true` once only).
    func claimReader() -> Bool {
        state.withLock { state in
            defer { state.claimed = true }
            return !state.claimed
        }
    }

    func start(_ token: SubscriptionToken) {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.token = token }
            return state.cancelled
        }
        if cancelled { token.cancel() }
    }

    func cancel() {
        let token = state.withLock { state -> SubscriptionToken? in
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
