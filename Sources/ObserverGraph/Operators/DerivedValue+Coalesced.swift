// Coalesced observation of a derived value: at most one call per turn of the observer's actor,
// with the latest value that reached it (the mechanism is in CoalescedObservation.swift, the
// composer in ObservableValue+Coalesced.swift).

extension DerivedValue {
    /// Observes the derived value with a closure that runs on the caller's actor, coalescing: at
    /// most one call per turn of the actor, with the latest value that reached this value.
    ///
    ///     @MainActor final class StatusLine {
    ///         private(set) var text = ""
    ///         private var token: SubscriptionToken?
    ///         init(progress: ObservableValue<Double>) {
    ///             token = progress.map { "\(Int($0 * 100)) %" }.removeDuplicates()
    ///                 .observeValuesCoalesced { [weak self] in self?.text = $0 }
    ///         }
    ///     }
    ///
    /// What `ObservableValue.observeValuesCoalesced(isolation:_:)` is to a value: use it where
    /// the sources change on another actor or thread faster than the observer's actor needs to
    /// see the result. The operators still run for every change, on the thread that made it;
    /// only the calls are coalesced. Every call has a value that reached this value after the
    /// previous call's, in the order they reached it; the last call has the last one.
    ///
    /// The first call, with the latest value, happens before this returns, when this value has
    /// one: a `filter` that let none through yet, or a value derived from an `EventChannel`,
    /// makes its first call for the first value that comes. Later calls never happen inside the
    /// code that changed a source, even on this actor: a change schedules a call on the actor's
    /// next turn, and the values that arrive until it runs join that call. The calls are paced,
    /// at least 1 ms apart, as a value's.
    ///
    /// The closure is a plain closure of the actor; the observation holds `isolation` weakly and
    /// ends when the actor is gone. The token keeps this value and its chain alive, as the other
    /// observations of a derived value do.
    ///
    /// Thread safety: the token may be cancelled from anywhere. Cancelled on the actor, no call
    /// happens after `cancel()` returns; cancelled elsewhere, none after the actor's current
    /// turn. Cancelling never blocks on a call (calls run only on the actor).
    /// Callbacks: `handler`, on `isolation` only; nothing when this value terminates (use
    /// `observeCoalesced(isolation:_:)` for the terminal event).
    /// - Returns: the token that keeps the observation (and this value) alive. Keep it.
    /// - Complexity: O(1) to start, per value that reaches this one and per call (one task per
    ///   call: the values that come while a call waits cost no task).
    @inlinable
    public func observeValuesCoalesced(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        keeping(
            publishing()._observeCoalesced(
                isolation: isolation, _Coalescer<_LatestValueComposer<Value>>.Handler.values(handler)))
    }

    /// Observes the derived value's events with a closure that runs on the caller's actor,
    /// coalescing the values as `observeValuesCoalesced(isolation:_:)` does: at most one
    /// `.value` per turn of the actor, with the latest value; then the terminal event, after the
    /// last value.
    ///
    /// Thread safety: see `observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only. A derived value that had terminated delivers
    /// only its terminal event, before this returns.
    /// - Returns: the token that keeps the observation (and this value) alive. Keep it.
    /// - Complexity: see `observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeCoalesced(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        keeping(
            publishing()._observeCoalesced(
                isolation: isolation, _Coalescer<_LatestValueComposer<Value>>.Handler.events(handler)))
    }
}
