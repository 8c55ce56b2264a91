// Coalesced observation of an array: at most one call per turn of the observer's actor, with
// the array as it is then and one changeset composed of every change since the last call (the
// mechanism, shared with sectioned arrays, is in CoalescedObservation.swift).

extension ReadOnlyObservableArray {
    /// Observes the array with a closure that runs on the caller's actor, coalescing: at most
    /// one call per turn of the actor, with the array as it is at that call and one changeset,
    /// valid from the array of the previous call, composed of every change made meanwhile.
    ///
    ///     @MainActor final class ListViewModel {
    ///         private(set) var rows: [String] = []
    ///         private var token: SubscriptionToken?
    ///         init(items: ObservableArray<String>) {
    ///             token = items.observeValuesCoalesced { [weak self] change in
    ///                 self?.rows = change.array  // a table view applies change.changeset
    ///             }
    ///         }
    ///     }
    ///
    /// Use it where the array changes on another actor or thread faster than the observer's
    /// actor takes the changes (a background actor filling a list a main-actor view shows): an
    /// event queued by `observeValues(isolation:_:)` holds its version of the array, so each
    /// mutation made while one waits copies the array first (O(n)); a coalesced observation
    /// queues no array, and the array is copied at most once per call. The calls are paced, at
    /// least 1 ms apart (the changes meanwhile join the next call), so that a closure that keeps
    /// each array costs the mutations at most one copy per millisecond; on the main actor the
    /// calls start there, so they come while other work holds every thread of the shared pool. The composed changeset
    /// follows the rules of each change's (a move that also changed is a delete and an insert;
    /// one with updates and moves is not a single table-view batch: split it with
    /// `StagedChangeset(_:from:to:)`).
    ///
    /// The first call, with the whole array as inserts into an empty one, happens before this
    /// returns (an array that has terminated makes no call at all). Later calls never happen
    /// inside the code that changed the array, even on this actor: a change schedules a call on
    /// the actor's next turn, and the changes made until it runs join that call (changes that
    /// undo each other, such as an insert and its removal, make no call). One exception: when a
    /// call runs while another thread is still delivering a change, the call takes the changes
    /// up to that one, with the array that change's event brings (the next mutation copies it,
    /// once), and the changes after it come in the next call.
    ///
    /// The closure is a plain closure of the actor, as for `observeValues(isolation:_:)`; the
    /// observation holds `isolation` weakly and ends when the actor is gone. On an actor
    /// instance, a closure that uses the actor's state captures the actor (`[weak self]` would
    /// take the closure off the actor) and holds it until the observation ends: cancel the token
    /// from a `stop()` of the actor. Taking the observation out of the array's observer list
    /// (`removeObserver(_:)`, `removeAllObservers()`) ends it for good, as a cancel does: it
    /// could not know what changed while it was out.
    ///
    /// Thread safety: the token may be cancelled from anywhere. Cancelled on the actor, no call
    /// happens after `cancel()` returns; cancelled elsewhere, none after the actor's current
    /// turn. Cancelling never blocks on a call (calls run only on the actor).
    /// Callbacks: `handler`, on `isolation` only; nothing at the array's termination (use
    /// `observeCoalesced(isolation:_:)` for the terminal event).
    /// - Complexity: O(n) for the first call. Per change, O(k) (k = its entries) while it is the
    ///   only one waiting or all waiting changes are appends; when changes of other kinds pile
    ///   up, O(n) once per call, then about the change's own cost on the array. Per call, O(1)
    ///   for one change, O(k) for k appended elements, else O(n + K log K), K = elements out of
    ///   their old order.
    @inlinable
    public func observeValuesCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (ArrayChange<Element>) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(isolation: isolation, _Coalescer<_ArrayComposer<Element>>.Handler.values(handler))
    }

    /// Observes the array's events with a closure that runs on the caller's actor, coalescing
    /// the values as `observeValuesCoalesced(isolation:_:)` does: at most one `.value` per turn
    /// of the actor, with the array as it is then and the changes since the previous call
    /// composed; then the terminal event, after the last value.
    ///
    /// Thread safety: see `observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only. An array that had terminated delivers only its
    /// terminal event, before this returns.
    /// - Complexity: see `observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (GraphEvent<ArrayChange<Element>>) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(isolation: isolation, _Coalescer<_ArrayComposer<Element>>.Handler.events(handler))
    }
}
