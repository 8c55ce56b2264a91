// Coalesced observation of an array: at most one call per turn of the observer's actor, with
// the array as it is then and one changeset composed of every change since the last call. The
// form for an array filled from another actor: a queued event holds no copy of the array, so
// each mutation meanwhile stays O(1) (an observer of `observe(isolation:_:)` holds each event's
// array until its actor takes it, and the next mutation copies the array).

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
    /// queues no array, and the array is copied at most once per call. The composed changeset
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
        _observeCoalesced(isolation: isolation, .values(handler))
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
        _observeCoalesced(isolation: isolation, .events(handler))
    }

    /// Joins a coalescing observer in one critical section of the array (so that it counts every
    /// change after the array it reads), then makes the first call here, on the actor.
    /// Inlinable, with the observer's `receive`, so that both are specialized for the element
    /// type where the array is observed: unspecialized, each change looked up generic metadata
    /// (about 250 instructions of the 725 a change cost).
    @inlinable
    func _observeCoalesced(
        isolation: isolated any Actor, _ handler: _ArrayCoalescer<Element>.Handler
    ) -> SubscriptionToken {
        let (coalescer, first, terminal, chores) = pipeline.withLock {
            state -> (
                _ArrayCoalescer<Element>, ArrayChange<Element>?, GraphEvent<ArrayChange<Element>>?,
                (Bool, Bool)
            )
            in
            let array = state.current!.array
            let coalescer = _ArrayCoalescer(
                handler: handler, actor: isolation, source: self, version: state.version, count: array.count)
            if let terminal = state.terminal { return (coalescer, nil, terminal, (false, false)) }
            let sink = _EventSink<ArrayChange<Element>>(
                firstSequence: state.takeSequence(), mode: .nonisolated,
                handler: .events { [coalescer] in coalescer.receive($0) }, source: self, direct: true,
                endsOnRemoval: true)
            let joined = _subscribeDeferringSweep(sink)
            coalescer.sink.withLock { $0 = SubscriptionToken(sink) }
            return (coalescer, _replayValue(state.current!), nil, (joined.sweepDue, joined.releaseDue))
        }
        if chores.1 { graphNode._releaseDroppedActors() }
        if chores.0 { graphNode._sweepDeadObservers() }
        if let terminal {
            coalescer.end(with: terminal)
        } else if let first {
            coalescer.callFirst(first)
        }
        let token = SubscriptionToken(coalescer)
        return _tokensKeepSourceAlive ? _keepingSource(token) : token
    }
}

/// A coalescing observation of an array (see `observeValuesCoalesced(isolation:_:)`): a
/// kit-internal observer of the array, called on the delivering thread, that composes the
/// changes it receives (`_ComposedArrayChanges`) and schedules one call at a time on the
/// observer's actor, which reads the array then.
///
/// The array it delivers is the array's current one, read when the call runs, if the array's
/// version is the one the observer has counted up to (every value event of an array moves its
/// version by one); if a change is still on its way, the event that brings it carries its array,
/// and that one is delivered instead (`wantsArray`). Either way no event holds an array while
/// it waits.
///
/// Thread safety: `@unchecked Sendable`: `state` is locked; the handler, an actor-isolated
/// closure, is called only on that actor, with no lock held.
@usableFromInline
final class _ArrayCoalescer<Element: Sendable>: _SubscriptionTarget, @unchecked Sendable {
    @usableFromInline enum Handler {
        case values((ArrayChange<Element>) -> Void)
        case events((GraphEvent<ArrayChange<Element>>) -> Void)
    }

    @usableFromInline struct State {
        /// `nil` once the observation ended (cancelled, terminated, or its actor gone).
        @usableFromInline var handler: Handler?
        /// The changes not delivered yet.
        @usableFromInline var pending: _ComposedArrayChanges
        /// The array's version after the last change received.
        @usableFromInline var version: UInt64
        /// A call is scheduled or running; it looks at what is pending before it ends.
        @usableFromInline var scheduled = false
        /// A call found the array ahead of the changes received: the next change received brings
        /// its array, kept in `arrived`.
        @usableFromInline var wantsArray = false
        /// A change to deliver, with its array, brought by the event the call waited for.
        @usableFromInline var arrived: ArrayChange<Element>?
        /// The terminal event, received after every value.
        @usableFromInline var terminal: GraphEvent<ArrayChange<Element>>?
        /// The token was cancelled (a call that was running may not make another).
        @usableFromInline var cancelled = false

        @usableFromInline
        init(handler: Handler, pending: _ComposedArrayChanges, version: UInt64) {
            self.handler = handler
            self.pending = pending
            self.version = version
        }
    }

    @usableFromInline let state: GraphLock<State>
    /// The actor of the handler, weakly: an actor that keeps its tokens must be able to go.
    weak var actor: (any Actor)?
    /// The array, weakly (a scheduled call holds it strongly, so no change is lost to its deinit).
    weak var source: ReadOnlyObservableArray<Element>?
    /// The token of the observer that feeds this one (whose closure holds this one): set when
    /// it joined, taken by the cancel, which ends that cycle.
    @usableFromInline let sink = GraphLock<SubscriptionToken?>(nil)

    @usableFromInline
    init(
        handler: Handler, actor: any Actor, source: ReadOnlyObservableArray<Element>, version: UInt64,
        count: Int
    ) {
        state = GraphLock(
            State(handler: handler, pending: _ComposedArrayChanges(count: count), version: version))
        self.actor = actor
        self.source = source
        super.init()
    }

    /// The first call, on the actor, before the observation is returned.
    @usableFromInline
    func callFirst(_ change: ArrayChange<Element>) {
        guard let handler = state.withLock({ $0.handler }) else { return }
        switch handler {
        case .values(let call): call(change)
        case .events(let call): call(.value(change))
        }
    }

    /// Ends an observation of an array that had terminated: its terminal event only.
    @usableFromInline
    func end(with terminal: GraphEvent<ArrayChange<Element>>) {
        let handler = state.withLock { state in
            defer { state.handler = nil }
            return state.handler
        }
        if case .events(let call) = handler { call(terminal) }
    }

    /// An event of the array, on the thread delivering it (kit code only: no user code runs).
    @inlinable
    func receive(_ event: GraphEvent<ArrayChange<Element>>) {
        if case .failed(let error) = event, error is _LeftTheObserverList {
            endOutOfTheList()
            return
        }
        let mustSchedule = state.withLock { state -> Bool in
            guard state.handler != nil else { return false }
            switch event {
            case .value(let change):
                state.version &+= 1
                state.pending.add(change.changeset)
                if state.wantsArray {
                    state.wantsArray = false
                    state.arrived = ArrayChange(array: change.array, changeset: state.pending.take())
                }
            case .finished, .failed:
                state.terminal = event
            }
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if mustSchedule { schedule() }
    }

    /// The sink left the array's observer list other than by this observation's cancel (which
    /// ended it first) or its termination (whose event came first): it missed or will miss
    /// changes it cannot learn, so the observation ends, as a cancel ends it.
    @usableFromInline
    func endOutOfTheList() {
        end(unlessTerminated: true)
    }

    /// Starts a task that makes the next call on the actor, holding the array until then.
    @usableFromInline
    func schedule() {
        guard let actor else {
            _cancel()  // the actor is gone: the observation ends
            return
        }
        let source = source
        Task { await self.run(source, isolation: actor) }
    }

    private enum Step {
        case none
        case call(Handler, ArrayChange<Element>, then: GraphEvent<ArrayChange<Element>>?, again: Bool)
        case end(Handler, GraphEvent<ArrayChange<Element>>)
    }

    /// A scheduled call's turn on the actor: delivers what is pending (and the terminal event
    /// after it), then schedules the next call if changes arrived meanwhile.
    private func run(_ source: ReadOnlyObservableArray<Element>?, isolation actor: isolated any Actor) {
        var released: [ArrayChange<Element>] = []  // arrays dropped here: released after unlocking
        let step = state.withLock { state -> Step in
            guard let handler = state.handler else { return .none }
            var change = state.arrived.take()
            // Changes that undid each other (an insert and its removal): no call for them.
            if let undone = change, undone.changeset.isEmpty {
                released.append(undone)
                change = nil
            }
            if change == nil && !state.pending.isEmpty {
                guard let source else {
                    assertionFailure("ObserverGraph: a coalesced change without its array")
                    state.scheduled = false
                    return .none
                }
                // The array's lock inside this one: the array never takes this lock under its own.
                let (current, version) = source._snapshot()
                released.append(current)
                guard version == state.version else {
                    // A change is on its way here: its event brings the array to deliver.
                    state.wantsArray = true
                    state.scheduled = false
                    return .none
                }
                let changeset = state.pending.take()
                if !changeset.isEmpty { change = ArrayChange(array: current.array, changeset: changeset) }
            }
            // Whatever was pending is taken now, unless `arrived` was delivered and more came since.
            let terminal = state.terminal
            let again = state.arrived != nil || !state.pending.isEmpty
            if terminal != nil && !again { state.handler = nil }
            if !again { state.scheduled = false }
            guard let change else {
                if let terminal { return .end(handler, terminal) }
                return .none
            }
            return .call(handler, change, then: again ? nil : terminal, again: again)
        }
        withExtendedLifetime(released) {}
        switch step {
        case .none:
            return
        case .end(let handler, let terminal):
            if case .events(let call) = handler { call(terminal) }
        case .call(let handler, let change, let terminal, let again):
            switch handler {
            case .values(let call): call(change)
            case .events(let call):
                call(.value(change))
                // Not after a cancel made by that call.
                if let terminal, !state.withLock({ $0.cancelled }) { call(terminal) }
            }
            if again { schedule() }
        }
    }

    override func _cancel() {
        end(unlessTerminated: false)
    }

    /// Ends the observation: no call after this (on the actor; elsewhere, after the actor's
    /// current turn), the sink leaves the list, and the closure and what was pending are
    /// released, with no lock held. `unlessTerminated`: not if it has ended already or its
    /// terminal event has come (checked in the same critical section).
    private func end(unlessTerminated: Bool) {
        let taken = state.withLock { state -> (Handler?, ArrayChange<Element>?)? in
            if unlessTerminated && (state.handler == nil || state.terminal != nil) { return nil }
            defer {
                (state.handler, state.cancelled, state.arrived) = (nil, true, nil)
                state.pending = _ComposedArrayChanges(count: 0)
            }
            return (state.handler, state.arrived)
        }
        guard let taken else { return }
        sink.withLock { $0.take() }?.cancel()
        withExtendedLifetime(taken) {}
    }

    override var _isClosed: Bool {
        state.withLock { $0.handler == nil }
    }
}
