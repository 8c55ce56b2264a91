// Coalesced observation of a sectioned array: at most one call per turn of the observer's actor,
// with the sections as they are then and one changeset composed of every change since the last
// call (the mechanism, shared with arrays, is in CoalescedObservation.swift).

extension ObservableSectionedArray {
    /// Observes the sectioned array with a closure that runs on the caller's actor, coalescing:
    /// at most one call per turn of the actor, with the sections as they are at that call and one
    /// changeset, valid from the sections of the previous call, composed of every change made
    /// meanwhile.
    ///
    ///     @MainActor final class InboxViewModel {
    ///         private(set) var sections: [ArraySection<String, String>] = []
    ///         private var token: SubscriptionToken?
    ///         init(inbox: ObservableSectionedArray<String, String>) {
    ///             token = inbox.observeValuesCoalesced { [weak self] change in
    ///                 self?.sections = change.sections  // a table view applies change.changeset
    ///             }
    ///         }
    ///     }
    ///
    /// Use it where the sections change on another actor or thread faster than the observer's
    /// actor takes the changes (a background actor filling a table a main-actor view shows): an
    /// event queued by `observeValues(isolation:_:)` holds its version of the sections, so each
    /// mutation made while one waits copies the list of sections and the items it touches first;
    /// a coalesced observation queues no sections, and they are copied at most once per call.
    /// The calls are paced, at least 1 ms apart, and on the main actor start there, as an
    /// array's (see `ReadOnlyObservableArray.observeValuesCoalesced(isolation:_:)`).
    ///
    /// The composed changeset is made from the changes' changesets: the list of sections
    /// composed as an array's changes are (a section whose metadata changed is an update), and
    /// for each section of the previous call that is still there, its items' changes composed,
    /// at its new index. A section inserted since comes whole, with its items; so does a section
    /// that moved and whose metadata changed (the changeset deletes and inserts it). An item
    /// moved to another section is a delete there and an insert here, as in every sectioned
    /// changeset, and so is one moved to another section and back: a delete and an insert in its
    /// own section, where one batch making the same moves would deliver a move or no change (a
    /// changeset does not say that the item one section gains is the one another lost).
    ///
    /// Calls, ownership, the actor and cancelling are as for
    /// `ReadOnlyObservableArray.observeValuesCoalesced(isolation:_:)`: the first call, with every
    /// section as an insert, before this returns; later calls never inside the code that
    /// changed the sections, even on this actor; no call for changes that undo each other within
    /// the list of sections or within one section's items (an insert and its removal); a call
    /// may take the changes up to one another thread is still delivering, with the sections its
    /// event brings; the observation holds `isolation` weakly; taken out of the observer list,
    /// it ends.
    ///
    /// Thread safety: the token may be cancelled from anywhere. Cancelled on the actor, no call
    /// happens after `cancel()` returns; cancelled elsewhere, none after the actor's current
    /// turn. Cancelling never blocks on a call (calls run only on the actor).
    /// Callbacks: `handler`, on `isolation` only; nothing at termination (use
    /// `observeCoalesced(isolation:_:)` for the terminal event).
    /// - Complexity: O(S) for the first call, S = sections. Per change, about its cost on an
    ///   array (see the array's form) for the list of sections, plus for each section whose
    ///   items it changes that cost on that section's items (O(S) once per call when the list of
    ///   sections changed other than by appends before). Per call, O(1) for one change that
    ///   changes the list of sections or items, not both; else the array's cost for the list of
    ///   sections, O(S) more when sections with item changes moved or went, plus the array's cost
    ///   for each section whose items changed.
    @inlinable
    public func observeValuesCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (SectionedArrayChange<Metadata, Item>) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(
            isolation: isolation, _Coalescer<_SectionedComposer<Metadata, Item>>.Handler.values(handler))
    }

    /// Observes the sectioned array's events with a closure that runs on the caller's actor,
    /// coalescing the values as `observeValuesCoalesced(isolation:_:)` does: at most one `.value`
    /// per turn of the actor, with the sections as they are then and the changes since the
    /// previous call composed; then the terminal event, after the last value.
    ///
    /// Thread safety: see `observeValuesCoalesced(isolation:_:)`.
    /// Callbacks: `handler`, on `isolation` only. A sectioned array that had terminated delivers
    /// only its terminal event, before this returns.
    /// - Complexity: see `observeValuesCoalesced(isolation:_:)`.
    @inlinable
    public func observeCoalesced(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (GraphEvent<SectionedArrayChange<Metadata, Item>>) -> Void
    ) -> SubscriptionToken {
        _observeCoalesced(
            isolation: isolation, _Coalescer<_SectionedComposer<Metadata, Item>>.Handler.events(handler))
    }
}
