extension GraphEventSource {
    /// The values of this source as an `AsyncSequence`.
    ///
    ///     for try await credits in wallet.credits.values() { render(credits) }
    ///
    /// - An `ObservableValue` yields its current value first, then every change; an
    ///   `EventChannel` yields what is sent after the call.
    /// - Buffering: values are delivered into the stream's buffer on the sender's thread, so a
    ///   slow loop never blocks senders. The default policy `.unbounded` keeps every value; use
    ///   `.bufferingNewest(1)` to keep only the latest (usual for state), or
    ///   `.bufferingOldest(n)`.
    /// - `.finished` ends the loop; `.failed(error)` makes it throw `error`.
    /// - Ending the loop early (`break`, or dropping the iterator) or cancelling the task removes
    ///   the observer from the source.
    ///
    /// Thread safety: safe from any thread; the stream is `Sendable`.
    /// Callbacks: none besides the stream's own.
    /// - Complexity: O(1) to create; each value costs one buffer insertion.
    public func values(
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncThrowingStream<Value, any Error> {
        _eventStream(bufferingPolicy: bufferingPolicy) { observeNonisolated($0) }
    }
}

/// The one bridge from an observation to an `AsyncThrowingStream`, for every source kind:
/// `observe` starts a nonisolated observation that feeds the stream; the stream's end (the
/// source terminated, the loop ended, the task was cancelled) cancels it.
func _eventStream<Value: Sendable>(
    bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy,
    observe: (@escaping @Sendable (GraphEvent<Value>) -> Void) -> SubscriptionToken
) -> AsyncThrowingStream<Value, any Error> {
    AsyncThrowingStream(bufferingPolicy: bufferingPolicy) { continuation in
        let token = observe { event in
            switch event {
            case .value(let value): continuation.yield(value)
            case .finished: continuation.finish()
            case .failed(let error): continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in token.cancel() }
    }
}
