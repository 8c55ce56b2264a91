// Coalesced observation of a value: at most one call per turn of the observer's actor, with the
// latest value set (the mechanism, shared with arrays, is in CoalescedObservation.swift).

/// What a coalesced observation of a value keeps between calls: the latest value it was given,
/// which the next call delivers. Keeping it costs the source nothing: a set replaces the value
/// rather than changing it in place (an `update` changes a copy), so the source never copies a
/// value because this holds it; and a call reads nothing of the source (no lock of the source
/// taken inside the observation's, no wait for a set still on its way).
@usableFromInline
struct _LatestValueComposer<Value: Sendable>: _ChangeComposer {
    @usableFromInline var latest: Value?

    @inlinable init(from change: Value) {}

    @inlinable init() {}

    @inlinable var isEmpty: Bool { latest == nil }

    @inlinable
    mutating func add(_ change: Value) -> Value? {
        defer { latest = change }
        return latest
    }

    @inlinable
    mutating func takeLatest() -> Value? {
        defer { latest = nil }
        return latest
    }

    /// Not used (`keepsLatest`): the latest value given, or `current`.
    @inlinable
    mutating func take(with current: Value) -> Value {
        takeLatest() ?? current
    }

    /// A value has no changeset: every set counts (`skipsEqualValues` leaves out, before they reach
    /// the observation, the sets that do not change the value).
    @inlinable
    static func isUnchanged(_ change: Value) -> Bool { false }

    @inlinable static var keepsLatest: Bool { true }
}

extension ObservableValue {
    /// Observes the value with a closure that runs on the caller's actor, coalescing: at most
    /// one call per turn of the actor, with the latest value set.
    ///
    ///     @MainActor final class ProgressViewModel {
    ///         private(set) var percent = 0.0
    ///         private var token: SubscriptionToken?
    ///         init(progress: ObservableValue<Double>) {
    ///             token = progress.observeValuesCoalesced { [weak self] fraction in
    ///                 self?.percent = fraction * 100
    ///             }
    ///         }
    ///     }
    ///
    /// Use it where the value changes on another actor or thread faster than the observer's
    /// actor needs to see it (a download's progress, a counter a worker bumps): a value that is
    /// set 10,000 times while the actor is busy makes one call, with the last value, where
    /// `observeValues(isolation:_:)` queues 10,000 calls, in order. The observation keeps the
    /// latest value for its next call (a set replaces the value, never changes it in place, so
    /// that costs the next set nothing). Every call has a value set after the previous call's,
    /// in the order of the sets; the last call has the value of the last set. A call may bring
    /// a value equal to the previous call's: a set of an equal value counts as a change (create
    /// the value with `skipsEqualValues: true` to leave out sets that do not change it), and sets
    /// that come back to the previous call's value within one turn make a call with it.
    ///
    /// The first call, with the current value, happens before this returns (a value that has
    /// finished makes no call at all). Later calls never happen inside the code that set the
    /// value, even on this actor: a set schedules a call on the actor's next turn, and the sets
    /// made until it runs join that call. A set that another thread is still delivering when a
    /// call runs (it reached an earlier observer, not this one yet) comes in the next call. The
    /// calls are paced, at least 1 ms apart (the sets meanwhile join the next call); on the main
    /// actor they start there, so they come while other work holds every thread of the shared
    /// pool.
    ///
    /// The closure is a plain closure of the actor, as for `observeValues(isolation:_:)`; the
    /// observation holds `isolation` weakly and ends when the actor is gone. On an actor
    /// instance, a closure that uses the actor's state captures the actor and holds it until the
    /// observation ends: cancel the token from a `stop()` of the actor. Taking the observation
    /// out of the value's observer list (`removeObserver(_:)`, `removeAllObservers()`) ends it
    /// for good, as a cancel does.
    ///
    /// Thread safety: the token may be cancelled from anywhere. Cancelled on the actor, no call
    /// happens after `cancel()` returns; cancelled elsewhere, none after the actor's current
    /// turn. Cancelling never blocks on a call (calls run only on the actor).
    /// Callbacks: `handler`, on `isolation` only; nothing when the value finishes (use
    /// `observeCoalesced(isolation:_:)` for the terminal event).
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: O(1) to start, per set and per call (one task per call: the sets that come
    ///   while a call waits cost no task and no copy of the value).
    @inlinable
    public func observeValuesCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(
            isolation: isolation, _Coalescer<_LatestValueComposer<Value>>.Handler.values(handler))
    }

    /// Observes the value's events with a closure that runs on the caller's actor, coalescing
    /// the values as `observeValuesCoalesced(isolation:_:)` does: at most one `.value` per turn
    /// of the actor, with the latest value set; then the terminal event, after the last value.
    ///
    /// Thread safety: see `observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only. A value that had finished delivers only its
    /// terminal event, before this returns.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: see `observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(
            isolation: isolation, _Coalescer<_LatestValueComposer<Value>>.Handler.events(handler))
    }
}

extension ObservableState {
    /// Observes the value with a closure that runs on the caller's actor, coalescing, as
    /// `ObservableValue.observeValuesCoalesced(isolation:_:)`: at most one call per turn of the
    /// actor, with the latest value set.
    ///
    /// Thread safety: as `ObservableValue.observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only: the current value first, before this returns
    /// (none for a state that has finished).
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `ObservableValue.observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeValuesCoalesced(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        storage.observeValuesCoalesced(isolation: isolation, handler)
    }

    /// Observes the events with a closure that runs on the caller's actor, coalescing the
    /// values, as `ObservableValue.observeCoalesced(isolation:_:)`.
    ///
    /// Thread safety: as `ObservableValue.observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only: the current value first, then at most one value
    /// per turn of the actor, then `.finished` if the state finishes (never `.failed`).
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `ObservableValue.observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeCoalesced(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        storage.observeCoalesced(isolation: isolation, handler)
    }
}
