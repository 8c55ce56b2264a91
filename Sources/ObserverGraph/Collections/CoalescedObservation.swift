import Dispatch

// Coalesced observation, shared by arrays, sectioned arrays and values: at most one call per turn
// of the observer's actor, with the content as it is then (an array's, read from the source) or the
// latest value received, and for arrays one changeset composed of every change since the last
// call. The form for a source changed from another actor: no event waits in a queue, so an
// array's mutations meanwhile stay O(1) (an observer of `observe(isolation:_:)` holds each event's
// array until its actor takes it, and the next mutation copies it).

/// What a coalesced observation composes: the changes its actor has not taken yet, without the
/// content they lead to (an array's), or the latest value (`keepsLatest`). A value, held under
/// the observation's lock; what it lets go of is released after unlocking. (A `SendableMetatype`:
/// the observation's task on the actor uses the type.)
@usableFromInline
protocol _ChangeComposer: SendableMetatype {
    /// The source's event value: the content and how it changed.
    associatedtype Change: Sendable
    /// Nothing pending, from the content of `change`.
    init(from change: Change)
    /// Nothing pending, from no content (what an ended observation keeps).
    init()
    /// Whether no change was added since the last `take(with:)`.
    var isEmpty: Bool { get }
    /// Adds `change`, the source's next change after the pending ones. Kit code only, on the
    /// delivering thread; keeps nothing of `change`'s content, unless `keepsLatest`. Returns the
    /// content it let go of (to release after unlocking: it may hold the user's objects).
    mutating func add(_ change: Change) -> Change?
    /// With `keepsLatest`, what is pending as it will be delivered (the latest change it was
    /// given), taken; afterwards nothing is pending. `nil` otherwise.
    mutating func takeLatest() -> Change?
    /// `current`'s content with the pending changes composed into one changeset, from the
    /// content the observer saw last to `current`'s; afterwards nothing is pending.
    mutating func take(with current: Change) -> Change
    /// Whether `change`'s changeset is empty (changes that undid each other).
    static func isUnchanged(_ change: Change) -> Bool
    /// Whether the composer keeps the latest change it was given, which a call then delivers
    /// without reading the source (see `_Coalescer.run`).
    static var keepsLatest: Bool { get }
}

extension _ChangeComposer {
    /// No, by default: the content a composer kept would make the source's next change copy it.
    @inlinable static var keepsLatest: Bool { false }

    @inlinable mutating func takeLatest() -> Change? { nil }
}

extension GraphEventSource {
    /// Joins a coalescing observer in one critical section of the source (so that it counts
    /// every change after the content it reads), then makes the first call here, on the actor.
    /// Inlinable, with the observer's `receive`, so that both are specialized for the element
    /// type where the source is observed: unspecialized, each change looked up generic metadata
    /// (about 250 instructions of the 725 an array's change cost).
    @inlinable
    final func _observeCoalesced<Composer: _ChangeComposer>(
        isolation: isolated any Actor, _ handler: _Coalescer<Composer>.Handler
    ) -> SubscriptionToken where Composer.Change == Value {
        let (coalescer, first, terminal, chores) = pipeline.withLock {
            state -> (
                _Coalescer<Composer>, Value?, GraphEvent<Value>?, (Bool, Bool)
            )
            in
            let coalescer = _Coalescer<Composer>(
                handler: handler, actor: isolation, source: self, version: state.version,
                current: state.current)
            if let terminal = state.terminal { return (coalescer, nil, terminal, (false, false)) }
            let sink = _EventSink<Value>(
                firstSequence: state.takeSequence(), mode: .nonisolated,
                handler: .events { [coalescer] in coalescer.receive($0) }, source: self, direct: true,
                endsOnRemoval: true)
            let joined = _subscribeDeferringSweep(sink)
            coalescer.sink.withLock { $0 = SubscriptionToken(sink) }
            // A derived value that no value has reached yet (a `filter`'s) makes no first call.
            return (
                coalescer, state.current.map { _replayValue($0) }, nil, (joined.sweepDue, joined.releaseDue)
            )
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

/// A coalescing observation of an array, a sectioned array or a value (see
/// `ReadOnlyObservableArray.observeValuesCoalesced(isolation:_:)`): a kit-internal observer of
/// the source, called on the delivering thread, that composes the changes it receives
/// (`Composer`) and schedules one call at a time on the observer's actor, which reads the
/// source's content then.
///
/// The content it delivers is the source's current one, read when the call runs, if the
/// source's version is the one the observer has counted up to (every value event of a source
/// moves its version by one); if a change is still on its way, the event that brings it carries
/// its content, and that one is delivered instead (`wantsContent`). Either way no event holds a
/// copy of the content while it waits.
///
/// Thread safety: `@unchecked Sendable`: `state` is locked; the handler, an actor-isolated
/// closure, is called only on that actor, with no lock held.
@usableFromInline
final class _Coalescer<Composer: _ChangeComposer>: _SubscriptionTarget, @unchecked Sendable {
    @usableFromInline typealias Change = Composer.Change

    @usableFromInline enum Handler {
        case values((Change) -> Void)
        case events((GraphEvent<Change>) -> Void)
    }

    @usableFromInline struct State {
        /// `nil` once the observation ended (cancelled, terminated, or its actor gone).
        @usableFromInline var handler: Handler?
        /// The changes not delivered yet.
        @usableFromInline var pending: Composer
        /// The source's version after the last change received.
        @usableFromInline var version: UInt64
        /// A call is scheduled or running; it looks at what is pending before it ends.
        @usableFromInline var scheduled = false
        /// A call found the source ahead of the changes received: the next change received brings
        /// its content, kept in `arrived`.
        @usableFromInline var wantsContent = false
        /// A change to deliver, with its content, brought by the event the call waited for.
        @usableFromInline var arrived: Change?
        /// The terminal event, received after every value.
        @usableFromInline var terminal: GraphEvent<Change>?
        /// The token was cancelled (a call that was running may not make another).
        @usableFromInline var cancelled = false
        /// When the last call took what was pending (`DispatchTime`'s uptime in nanoseconds; 0
        /// before the first): the next call for the main actor comes `_Coalescer.pace` later at
        /// the earliest (see `schedule(after:)`).
        @usableFromInline var lastCall: UInt64 = 0

        @usableFromInline
        init(handler: Handler, pending: Composer, version: UInt64) {
            self.handler = handler
            self.pending = pending
            self.version = version
        }
    }

    @usableFromInline let state: GraphLock<State>
    /// The actor of the handler when it is not the main actor, weakly: an actor that keeps its
    /// tokens must be able to go. The main actor, which never goes, is held as `onMainActor`: a
    /// weak reference to it would give `MainActor.shared` a side table, which makes every retain
    /// and release of it in the app slower (see `_SinkState`).
    weak var otherActor: (any Actor)?
    /// The handler's actor is the main actor.
    let onMainActor: Bool
    /// The source, weakly (an array's scheduled call holds it strongly, so no change is lost to its
    /// deinit; a value's call reads nothing of it).
    weak var source: GraphEventSource<Change>?
    /// The actor is the main actor, and its jobs run on the main queue (as they do unless a
    /// program installs its own main executor): its calls are paced through that queue (see
    /// `schedule(after:)`). Made on the actor, when the observation is.
    let paced: Bool
    /// The token of the observer that feeds this one (whose closure holds this one): set when
    /// it joined, taken by the cancel, which ends that cycle.
    @usableFromInline let sink = GraphLock<SubscriptionToken?>(nil)

    @usableFromInline
    init(
        handler: Handler, actor: any Actor, source: GraphEventSource<Change>, version: UInt64,
        current: Change?
    ) {
        let pending = current.map { Composer(from: $0) } ?? Composer()
        state = GraphLock(State(handler: handler, pending: pending, version: version))
        onMainActor = ObjectIdentifier(actor) == _MainActorCheck.mainActor
        if !onMainActor { otherActor = actor }
        self.source = source
        // Made on `actor` (see `_observeCoalesced`): on the main actor, whether the main queue runs it.
        paced = onMainActor && _MainActorCheck.isCurrent()
        super.init()
    }

    /// The first call, on the actor, before the observation is returned.
    @usableFromInline
    func callFirst(_ change: Change) {
        guard let handler = state.withLock({ $0.handler }) else { return }
        switch handler {
        case .values(let call): call(change)
        case .events(let call): call(.value(change))
        }
    }

    /// Ends an observation of a source that had terminated: its terminal event only.
    @usableFromInline
    func end(with terminal: GraphEvent<Change>) {
        let handler = state.withLock { state in
            defer { state.handler = nil }
            return state.handler
        }
        if case .events(let call) = handler { call(terminal) }
    }

    /// An event of the source, on the thread delivering it (kit code only: no user code runs).
    @inlinable
    func receive(_ event: GraphEvent<Change>) {
        if case .failed(let error) = event, error is _LeftTheObserverList {
            endOutOfTheList()
            return
        }
        var dropped: Change?  // released after unlocking
        var lastCall: UInt64 = 0
        let mustSchedule = state.withLock { state -> Bool in
            guard state.handler != nil else { return false }
            switch event {
            case .value(let change):
                state.version &+= 1
                dropped = state.pending.add(change)
                if state.wantsContent {
                    state.wantsContent = false
                    state.arrived = state.pending.take(with: change)
                }
            case .finished, .failed:
                state.terminal = event
            }
            guard !state.scheduled else { return false }
            state.scheduled = true
            lastCall = state.lastCall
            return true
        }
        withExtendedLifetime(dropped) {}
        if mustSchedule { schedule(after: lastCall) }
    }

    /// The sink left the source's observer list other than by this observation's cancel (which
    /// ended it first) or its termination (whose event came first): it missed or will miss
    /// changes it cannot learn, so the observation ends, as a cancel ends it.
    @usableFromInline
    func endOutOfTheList() {
        end(unlessTerminated: true)
    }

    /// How long calls for the main actor are apart at the least: 1 ms (see `schedule(after:)`).
    @usableFromInline static var pace: UInt64 { 1_000_000 }

    /// Schedules the next call on the actor (holding an array's source until then). `lastCall`:
    /// when the last call for the main actor took what was pending (0: none yet).
    ///
    /// For the main actor, the call starts there, as a mailbox's does (see
    /// `_EventSink._startMailboxTask`): a task that first needed a thread of the shared pool showed
    /// no progress while workers held every thread of it (found by a review of values' calls: the
    /// second call came 2 s later, when the workers were done).
    ///
    /// The calls are paced: a call runs on the next turn when the last call was `pace` (1 ms)
    /// ago or more, otherwise when that time has come (`DispatchQueue.main`, which is the main
    /// actor's queue), so that changes pile up for it. An array's call, kept by the closure,
    /// makes the next change copy the whole array: calls on an idle main actor, each after a few
    /// appends, cost 16,000 appends from a thread 1,267 ns each instead of 231 ns (one full
    /// benchmark run). A value's call copies nothing, but each call met the setting thread on
    /// this observation's lock, where it often slept: 100,000 sets from a thread cost 125 ns each
    /// unpaced, 31.5 ns paced (benchmark row `actor: value set from a thread`, one run each).
    ///
    /// A program that installed its own main executor (the main queue does not run the main
    /// actor's jobs then; found by a review, with the experimental executor factory of Swift 6.3)
    /// gets unpaced calls, each on the actor's next turn. For another actor, a task of the actor
    /// (which runs on the shared pool), paced too: it sleeps first when the last call was less
    /// than `pace` ago (an array appended to from a thread for 200 ms, shown by a custom actor:
    /// 3,560 calls unpaced, 170 paced; see `CoalescedPacingTests`).
    @usableFromInline
    func schedule(after lastCall: UInt64) {
        // A value's call reads nothing of the source (`keepsLatest`), so it does not keep it.
        let source = Composer.keepsLatest ? nil : source
        guard onMainActor else {
            guard let actor = otherActor else {
                _cancel()  // the actor is gone: the observation ends
                return
            }
            // Another actor's calls are tasks of the actor, paced the same way: the task sleeps
            // until `pace` has passed since the last call took what was pending.
            let now = DispatchTime.now().uptimeNanoseconds
            let due = lastCall == 0 ? now : lastCall &+ Self.pace
            Task {
                if due > now { try? await Task.sleep(nanoseconds: due - now) }
                await self.run(source, isolation: actor)
            }
            return
        }
        if paced && lastCall != 0 {
            let due = lastCall &+ Self.pace
            if DispatchTime.now().uptimeNanoseconds < due {
                DispatchQueue.main.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) {
                    self.run(source, isolation: MainActor.shared)
                }
                return
            }
        }
        Task { @MainActor in self.run(source, isolation: MainActor.shared) }
    }

    private enum Step {
        case none
        case call(Handler, Change, then: GraphEvent<Change>?, again: Bool)
        case end(Handler, GraphEvent<Change>)
    }

    /// A scheduled call's turn on the actor: delivers what is pending (and the terminal event
    /// after it), then schedules the next call if changes arrived meanwhile.
    private func run(_ source: GraphEventSource<Change>?, isolation actor: isolated any Actor) {
        var released: [Change] = []  // contents dropped here: released after unlocking
        // Calls are paced from when they take what is pending (see `schedule(after:)`).
        let now = DispatchTime.now().uptimeNanoseconds
        let step = state.withLock { state -> Step in
            guard let handler = state.handler else { return .none }
            var change = state.arrived.take()
            // Changes that undid each other (an insert and its removal): no call for them.
            if let undone = change, Composer.isUnchanged(undone) {
                released.append(undone)
                change = nil
            }
            if change == nil && Composer.keepsLatest {
                change = state.pending.takeLatest()
            } else if change == nil && !state.pending.isEmpty {
                guard let source else {
                    assertionFailure("ObserverGraph: a coalesced change without its source")
                    state.scheduled = false
                    return .none
                }
                // The source's lock inside this one: the source never takes this lock under its own.
                let (current, version) = source._snapshot()
                released.append(current)
                guard version == state.version else {
                    // A change is on its way here: its event brings the content to deliver.
                    state.wantsContent = true
                    state.scheduled = false
                    return .none
                }
                let composed = state.pending.take(with: current)
                if !Composer.isUnchanged(composed) { change = composed }
            }
            // Whatever was pending is taken now, unless `arrived` was delivered and more came since.
            let terminal = state.terminal
            let again = state.arrived != nil || !state.pending.isEmpty
            // The terminal event goes with this call (an error it carries is released after it).
            if terminal != nil && !again { (state.handler, state.terminal) = (nil, nil) }
            if !again { state.scheduled = false }
            guard let change else {
                if let terminal { return .end(handler, terminal) }
                return .none
            }
            state.lastCall = now
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
            if again { schedule(after: now) }
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
        let taken = state.withLock { state -> (Handler?, Change?, Composer, GraphEvent<Change>?)? in
            if unlessTerminated && (state.handler == nil || state.terminal != nil) { return nil }
            defer {
                (state.handler, state.cancelled, state.arrived, state.terminal) = (nil, true, nil, nil)
                state.pending = Composer()
            }
            return (state.handler, state.arrived, state.pending, state.terminal)
        }
        guard let taken else { return }
        sink.withLock { $0.take() }?.cancel()
        withExtendedLifetime(taken) {}
    }

    override var _isClosed: Bool {
        state.withLock { $0.handler == nil }
    }
}
