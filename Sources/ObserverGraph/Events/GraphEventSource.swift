import Dispatch

/// The shared engine of `ObservableValue` and `EventChannel`: an observable whose observers are
/// closures, fed through one ordered delivery queue.
///
/// **Delivery order.** Every event goes through one first-in, first-out queue per source, and
/// one thread at a time delivers from it, to the closure observers in registration order (as
/// the core's `broadcast` would; the source keeps its own strong list of them, read again from
/// its node whenever an observer joined or left, so a delivery touches no weak reference and no
/// reference count per observer). So every observer sees
/// the same events in the same order. An event sent while a delivery is running (from inside an
/// observer, or from another thread) is queued. It is delivered after the current event has
/// reached every observer, by the thread already delivering. Delivery is synchronous on that
/// thread unless an observer asked for a `DispatchQueue`.
///
/// **Joining.** An observer added with `observe` is in `observers` when `observe` returns. It
/// receives exactly the events queued after it joined: for an `ObservableValue`, the current
/// value first, then every change. If `observe` is called while a delivery is running, that
/// first event comes after the running delivery.
///
/// **Termination.** `finish()` or `fail(_:)` queue a terminal event. Once it is delivered, the
/// source removes (releases) all observers. Later sends are ignored. A late observer receives the
/// terminal event at once, and nothing else.
///
/// Observers you add yourself with `addObserver(_:)` are in the graph too, but receive only
/// the graph callbacks: events go to the closure observers made by `observe`.
///
/// Thread safety: `Sendable`; every method is safe from any thread. No closure of yours runs
/// while the source holds a lock.
public class GraphEventSource<Value: Sendable>: GraphObservable, @unchecked Sendable {
    /// The node that holds this source's observers.
    public let graphNode = GraphNode()
    @usableFromInline let pipeline: GraphLock<_SourceState<Value>>
    /// The closure observers as of the last delivery, held strongly: read and written only by
    /// the thread delivering, which the drain word (`_MembershipWatch.drain`; without atomics,
    /// the pipeline's `draining` flag) makes one at a time, and whose acquire and release order
    /// one drainer's work before the next one's.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) final var _roster = _SinkRoster<Value>()
    /// Where the OS has atomics, the node's report of joins and leaves (`_MembershipWatch`), so
    /// that a delivery takes no critical section of the node; `nil` otherwise. Retained once
    /// here, released by the deinit: a delivery borrows it, with no reference count.
    @usableFromInline final let _watch: Unmanaged<AnyObject>?

    /// Whether each closure observation keeps this source alive until it is cancelled: a derived
    /// array's, which nothing else holds (its upstream holds it weakly), so that keeping only
    /// the token of `items.map(f).observe { … }` is enough, as for a `DerivedValue`.
    @usableFromInline final let _tokensKeepSourceAlive: Bool

    @inlinable
    init(current: Value?, tokensKeepSourceAlive: Bool = false) {
        _tokensKeepSourceAlive = tokensKeepSourceAlive
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics {
            let watch = _MembershipWatch()
            _watch = Unmanaged.passRetained(watch)
            graphNode._watchObservers(watch)
        } else {
            _watch = nil
        }
        pipeline = GraphLock(_SourceState(current: current, drainWord: _watch))
    }

    /// A source that goes away without terminating ends its streams with `.finished`, so that no
    /// observer (an async loop, say) waits for it forever. Nothing is draining at this point: a
    /// drain keeps its source alive.
    deinit {
        defer {
            _watch?.release()
            // The entries' storage, if a delivery read the node (generic work, so skipped
            // when none did).
            if _roster.generation != nil { _roster.clear() }
        }
        // With no observer left (the usual end: tokens go before their source), nothing to
        // finish: no generic work, which in a deinit runs unspecialized. (Filed entries, not
        // slots: a removed observer's slot stays, vacant, until the registry compacts.)
        let observers = graphNode._state.withLock { state in
            state.observers.filedCount == 0 ? nil : state.observers.slots
        }
        guard let observers else { return }
        _finishAtDeinit(observers)
    }

    /// Ends the closure observers of a source that goes without terminating, in registration
    /// order, as a `.finished` event ends them. A values-only one that the event would only
    /// close (nonisolated, or on an actor with nothing queued) is closed directly
    /// (`_EventSink._endQuietly()`): making and delivering the event, and reading whether the
    /// source terminated, is generic work that runs unspecialized here (some 3,900 instructions
    /// per observer, and a task for an actor's), and closing is right either way. Nothing else
    /// changes these observers meanwhile: a token reaches its source through a weak reference,
    /// which is gone, and no drain runs (a drain keeps its source alive).
    /// - Complexity: O(n), n = the slots of the node.
    final func _finishAtDeinit(_ observers: ContiguousArray<_Slot>) {
        var unterminated: Bool?  // read at the first observer that needs it
        for slot in observers where slot.bits != 0 && slot.bits & _SlotFlags.boxed == 0 {
            // Other observers (added with `addObserver`) get no events.
            guard let sink = slot.loadObject() as? _EventSink<Value> else { continue }
            if sink._endQuietly() { continue }
            if unterminated == nil { unterminated = pipeline.withLock { $0.terminal } == nil }
            if unterminated == true { sink.deliver(.finished, drainer: nil, fromDeinit: true) }
        }
    }

    /// Observes the events of this source with a closure that runs on the caller's actor, until
    /// the returned token is cancelled or deallocated: the form for actor-isolated code.
    ///
    ///     @MainActor final class CreditsViewModel {
    ///         var text = ""
    ///         var tokens: [SubscriptionToken] = []
    ///         init(credits: ObservableValue<Int>) {
    ///             tokens.append(credits.observe { [weak self] event in self?.text = "\(event)" })
    ///         }
    ///     }
    ///
    /// The closure is a plain closure of the actor: it may touch the actor's state, with no
    /// `Task`, `assumeIsolated` or `@Sendable`. It is called only on `isolation` (by default the
    /// caller's actor; from nonisolated code this form does not compile: use
    /// `observe(on:_:)` or `observeNonisolated(_:)`).
    ///
    /// Delivery: in source order, exactly once each, the terminal event last. When the code that
    /// delivers an event already runs on this actor (a `send` or `update` made on it; on the
    /// main actor, also a property setter, a nonisolated function or a derived value's pass,
    /// recognized by the main queue), the closure is called before that call returns, after
    /// anything queued for it, unless another thread is delivering this source's events right
    /// then (the change is queued for that thread, whose delivery reaches this closure through
    /// its mailbox). Otherwise (and for the `.finished` of a source's deinit) the event
    /// joins this observer's first-in, first-out mailbox, which one task at a time runs on the
    /// actor. A closure that sends to its own source does not re-enter: the new
    /// event is delivered after the current call returns.
    ///
    /// Ownership: the observation holds `isolation` weakly (the main actor, which lives as long
    /// as the process, is not held at all), so an actor that keeps its tokens goes when nothing
    /// else holds it (and its tokens end their observations). A closure that
    /// uses an actor instance's state captures it, and holds it until the observation ends
    /// (cancel, or the source's terminal event). An observation whose actor is gone ends at the
    /// first event that arrives from elsewhere, without a call.
    ///
    /// Thread safety: the token may be cancelled from anywhere. Cancelled on the actor, no call
    /// happens after `cancel()` returns; cancelled elsewhere, no call happens after the actor's
    /// current turn. Cancelling never blocks (calls run only on the actor).
    /// Callbacks: `handler`, on `isolation` only. An `ObservableValue` delivers its current value
    /// first; a terminated source delivers its terminal event.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1); each delivery is O(1) plus, from another thread, a share of
    ///   one task per burst of events.
    @inlinable
    public func observe(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .actor(isolation), drainer: isolation, handler)
    }

    /// Observes only the values, with a closure that runs on the caller's actor (see
    /// `observe(isolation:_:)`), until the returned token is cancelled or deallocated.
    ///
    /// Thread safety: as `observe(isolation:_:)`.
    /// Callbacks: `handler` for each value, on `isolation` only; termination is not reported
    /// (use `observe(isolation:_:)` for it).
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `observe(isolation:_:)`.
    @inlinable
    public func observeValues(
        isolation: isolated any Actor = #isolation,
        _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .actor(isolation), drainer: isolation, values: handler)
    }

    /// Observes the events of this source with a `@Sendable` closure run asynchronously on
    /// `queue`, until the returned token is cancelled or deallocated.
    ///
    /// Thread safety: safe from any thread, also from inside another observer.
    /// Callbacks: `handler`, on `queue` (in order when the queue is serial). An `ObservableValue`
    /// delivers its current value first; a terminated source delivers its terminal event.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1); each delivery is one `queue.async`.
    @inlinable
    public func observe(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .queue(queue), drainer: nil, handler)
    }

    /// Observes only the values with a `@Sendable` closure run asynchronously on `queue`.
    ///
    /// Thread safety: as `observe(on:_:)`.
    /// Callbacks: `handler` for each value, on `queue`; termination is not reported.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `observe(on:_:)`.
    @inlinable
    public func observeValues(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .queue(queue), drainer: nil, values: handler)
    }

    /// Observes the events of this source with a `@Sendable` closure called on whichever thread
    /// delivers (usually the sender's, before `send` returns), until the returned token is
    /// cancelled or deallocated: the form for nonisolated code and threads.
    ///
    /// Thread safety: safe from any thread, also from inside another observer. Calls are
    /// serialized: one delivery of this source runs at a time.
    /// Callbacks: `handler`, on the delivering thread. An `ObservableValue` delivers its current
    /// value first (before this returns, unless another thread is delivering); a terminated
    /// source delivers its terminal event.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1), plus deliveries queued meanwhile if this thread delivers them.
    @inlinable
    public func observeNonisolated(
        _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .nonisolated, drainer: nil, handler)
    }

    /// Observes only the values with a `@Sendable` closure called on whichever thread delivers
    /// (see `observeNonisolated(_:)`).
    ///
    /// Thread safety: as `observeNonisolated(_:)`.
    /// Callbacks: `handler` for each value; termination is not reported.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: as `observeNonisolated(_:)`.
    @inlinable
    public func observeValuesNonisolated(
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        _observe(mode: .nonisolated, drainer: nil, values: handler)
    }

    /// Joins a closure observer and queues its first event, in one critical section (no send
    /// can slip between them). The callbacks this fires are the kit's own (no-ops); the sweep for
    /// deallocated observers, which may release objects, runs after unlocking.
    @inlinable
    func _observe(
        mode: _EventSink<Value>.Mode, drainer: (any Actor)?,
        _ handler: @escaping _EventSink<Value>.Handler
    ) -> SubscriptionToken {
        _join(mode: mode, drainer: drainer, .events(handler))
    }

    /// Joins a values-only closure observer (see `_observe(mode:drainer:_:)`): the closure is
    /// kept as written, and the sink passes it the value of each value event.
    @inlinable
    func _observe(
        mode: _EventSink<Value>.Mode, drainer: (any Actor)?, values handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        _join(mode: mode, drainer: drainer, .values(handler))
    }

    /// Inlinable so that it is specialized for the value type in the observing module: the
    /// generic version looks up about 30 generic types per call.
    /// `endsOnRemoval`: the observation ends when it is taken out of the observer list (a
    /// `values()` sequence's, see `_EventSink._endsOnRemoval`).
    @inlinable
    final func _join(
        mode: _EventSink<Value>.Mode, drainer: (any Actor)?, _ handler: _Handler<Value>.Body,
        endsOnRemoval: Bool = false
    ) -> SubscriptionToken {
        let (sink, mustDrain, chores) = pipeline.withLock { state in
            let sink = _EventSink(
                firstSequence: state.takeSequence(), mode: mode, handler: handler, source: self,
                endsOnRemoval: endsOnRemoval)
            if let terminal = state.terminal {
                return (sink, state.enqueue(.replay(terminal, to: sink)), (false, false))
            }
            let joined = _subscribeDeferringSweep(sink)
            let chores = (joined.sweepDue, joined.releaseDue)
            guard let current = state.current else { return (sink, false, chores) }
            return (sink, state.enqueue(.replay(.value(_replayValue(current)), to: sink)), chores)
        }
        if chores.1 { graphNode._releaseDroppedActors() }
        if chores.0 { graphNode._sweepDeadObservers() }
        if mustDrain { _drainQueue(_identity(of: drainer)) }
        return _tokensKeepSourceAlive ? _keepingSource(SubscriptionToken(sink)) : SubscriptionToken(sink)
    }

    /// A token that cancels `token` and, until then, keeps this source alive.
    @usableFromInline
    final func _keepingSource(_ token: SubscriptionToken) -> SubscriptionToken {
        SubscriptionToken(_KeepAliveTarget(token: token, owner: self))
    }

    /// Ends the stream normally: observers receive `.finished`, then are removed.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers (`.finished`), as for any delivery.
    /// - Returns: `false` (and does nothing) if the source had already terminated.
    /// - Complexity: O(n) for the delivery to n observers.
    @discardableResult
    public func finish(isolation: isolated (any Actor)? = #isolation) -> Bool {
        terminate(with: .finished, isolation: isolation)
    }

    /// Ends the stream with an error: observers receive `.failed(error)`, then are removed.
    ///
    /// For an error the app can recover from, send a value (a `Result` or a `ViewState`)
    /// instead: termination is final.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers (`.failed`), as for any delivery.
    /// - Returns: `false` (and does nothing) if the source had already terminated.
    /// - Complexity: O(n) for the delivery to n observers.
    @discardableResult
    public func fail(_ error: any Error, isolation: isolated (any Actor)? = #isolation) -> Bool {
        terminate(with: .failed(error), isolation: isolation)
    }

    /// The terminal event (`.finished` or `.failed`), once `finish()` or `fail(_:)` was called.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var terminalEvent: GraphEvent<Value>? {
        pipeline.withLock { $0.terminal }
    }

    private func terminate(with event: GraphEvent<Value>, isolation: (any Actor)?) -> Bool {
        let (accepted, mustDrain) = pipeline.withLock { state -> (Bool, Bool) in
            guard state.terminal == nil else { return (false, false) }
            state.terminal = event
            return (true, state.enqueue(.terminate(event, sequence: state.takeSequence())))
        }
        if mustDrain { _drainQueue(_identity(of: isolation)) }
        return accepted
    }

    /// Queues `.value(value)` for every observer; `false` if terminated.
    @inlinable
    final func _send(_ value: Value, isolation: (any Actor)?) -> Bool {
        let (accepted, claimed, sequence) = pipeline.withLock { state -> (Bool, Bool, UInt64) in
            guard state.terminal == nil else { return (false, false, 0) }
            let sequence = state.takeSequence()
            return (true, state.claimOrQueue(.value(value), sequence: sequence), sequence)
        }
        if claimed { _deliverClaimed(.value(value), upTo: sequence, drainer: _identity(of: isolation)) }
        return accepted
    }

    /// What a new observer receives first, given the current value. Arrays override it (a new
    /// observer gets the whole array as inserts). Runs under the lock: no user code.
    @usableFromInline
    func _replayValue(_ current: Value) -> Value {
        current
    }

    /// The current value and its version, for optimistic read-modify-write.
    @inlinable
    final func _snapshot() -> (value: Value, version: UInt64) {
        pipeline.withLock { ($0.current!, $0.version) }
    }

    /// Stores `newValue` and queues its delivery if the value is still at `version`: `.stale`
    /// when another change landed meanwhile (try again), `.terminated` when the source has
    /// terminated (the change is dropped). The replaced value is released after unlocking.
    @inlinable
    final func _commit(
        _ newValue: Value, ifVersion version: UInt64, isolation: (any Actor)?, closing thread: UInt? = nil,
        deferringDrainTo nested: _TransactionLog? = nil
    ) -> _CommitOutcome {
        var owed = false
        var sequence: UInt64 = 0
        var closedLog: _TransactionLog?  // released after unlocking: it holds nested results
        let (outcome, replaced, mustDrain) = pipeline.withLock { state -> (_CommitOutcome, Value?, Bool) in
            guard state.terminal == nil else {
                if let thread { owed = state.close(thread, keeping: &closedLog) }
                return (.terminated, nil, false)
            }
            guard state.version == version else { return (.stale, nil, false) }
            if let thread { owed = state.close(thread, keeping: &closedLog) }
            let replaced = state.current
            state.current = newValue
            state.version &+= 1
            sequence = state.takeSequence()
            // Nested: queued for the outer transaction's drain. Otherwise this caller delivers
            // its own change first when nobody drains (no second critical section to fetch it).
            let mustDrain =
                nested == nil
                ? state.claimOrQueue(.value(newValue), sequence: sequence)
                : state.enqueue(.broadcast(.value(newValue), sequence: sequence))
            return (.committed, replaced, mustDrain)
        }
        withExtendedLifetime((replaced, closedLog)) {}
        if mustDrain, let nested {
            nested.owesDrain = true  // the outer transaction delivers when it closes
        } else if mustDrain {
            _deliverClaimed(.value(newValue), upTo: sequence, drainer: _identity(of: isolation))
        } else if owed {
            _drainQueue(_identity(of: isolation))
        }
        return outcome
    }

    /// Stores `newValue` and queues its delivery in one critical section, whatever the current
    /// value: a set needs no read-modify-write. Inside a read-modify-write of this source on the
    /// same thread it is a nested change: applied once, replayed (not applied again) when the
    /// outer body runs again, delivered when the outer change closes. After termination the set
    /// is dropped. The replaced value is released after unlocking.
    @inlinable
    final func _store(_ newValue: Value, isolation: (any Actor)?) {
        var nested: _TransactionLog?
        var sequence: UInt64 = 0
        let (replaced, mustDrain) = pipeline.withLock { state -> (Value?, Bool) in
            if !state.openTransactions.isEmpty, let log = state.nestedLog(of: _currentThreadID()) {
                nested = log
                // Applied on an earlier run of the outer body: not again.
                if log.replay(as: _StoreRecord.self) != nil { return (nil, false) }
                _ = log.record(_StoreRecord())
            }
            guard state.terminal == nil else { return (nil, false) }
            let replaced = state.current
            state.current = newValue
            state.version &+= 1
            sequence = state.takeSequence()
            guard nested == nil else {
                return (replaced, state.enqueue(.broadcast(.value(newValue), sequence: sequence)))
            }
            return (replaced, state.claimOrQueue(.value(newValue), sequence: sequence))
        }
        withExtendedLifetime(replaced) {}
        if mustDrain, let nested {
            nested.owesDrain = true  // the outer transaction delivers when it closes
        } else if mustDrain {
            _deliverClaimed(.value(newValue), upTo: sequence, drainer: _identity(of: isolation))
        }
    }

    /// Optimistic read-modify-write, the one loop every compound change uses: `body` gets the
    /// current value with no lock held and returns the value to store (`nil`: nothing changes)
    /// and a result. The new value is committed only if no other change landed meanwhile;
    /// otherwise `body` runs again on the newer value. After termination the change is dropped.
    /// Returns the result of the run that counted, and `accepted == false` when the source had
    /// terminated (the change was dropped). Check and commit happen in one critical section.
    ///
    /// **Nesting.** A change of this source made from inside `body` on the same thread (an
    /// `update` inside an `update`, an `append` inside a `batch`) is applied at once, on the
    /// committed value, and delivered; the outer change then finds its snapshot stale and runs
    /// `body` again on the new value. During that rerun, each nested change that was already
    /// applied is not applied again: it returns the result of its first run. So every change of
    /// the outer and the inner bodies is applied exactly once (no livelock, no lost change), the
    /// inner ones first. The thread's open transaction is recorded in the snapshot's critical
    /// section and closed in the commit's, so the common, unnested path takes no extra lock.
    @inlinable
    final func _readModifyWrite<Result, Failure: Error>(
        isolation: (any Actor)? = nil, _ body: (Value) throws(Failure) -> (newValue: Value?, result: Result)
    ) throws(Failure) -> (result: Result, accepted: Bool) {
        let thread = _currentThreadID()
        var (current, version, nested) = pipeline.withLock { state in
            (state.current!, state.version, state.open(thread))
        }
        if let log = nested { return try _nestedReadModifyWrite(log, isolation: isolation, body) }
        var closed = false
        defer {  // `body` threw
            if !closed {
                var closedLog: _TransactionLog?  // released after unlocking: it holds nested results
                let owed = pipeline.withLock { $0.close(thread, keeping: &closedLog) }
                withExtendedLifetime(closedLog) {}
                if owed { _drainQueue(_identity(of: isolation)) }
            }
        }
        while true {
            let (newValue, result) = try body(current)
            guard let newValue else {
                var closedLog: _TransactionLog?  // released after unlocking: it holds nested results
                let now = pipeline.withLock { state -> (UInt64, Bool, Bool) in
                    let owed = state.version == version ? state.close(thread, keeping: &closedLog) : false
                    return (state.version, state.terminal == nil, owed)
                }
                withExtendedLifetime(closedLog) {}
                if now.0 == version {
                    closed = true
                    if now.2 { _drainQueue(_identity(of: isolation)) }
                    return (result, now.1)
                }
                (current, version, nested) = _resnapshot(thread)
                continue
            }
            switch _commit(newValue, ifVersion: version, isolation: isolation, closing: thread) {
            case .committed:
                closed = true
                return (result, true)
            case .terminated:
                closed = true
                return (result, false)
            case .stale:
                (current, version, nested) = _resnapshot(thread)
            }
        }
    }

    /// The current value and version for a retry of the open transaction of `thread`; its
    /// nested changes (if any) replay from the start.
    @inlinable
    final func _resnapshot(_ thread: UInt) -> (Value, UInt64, _TransactionLog?) {
        let (value, version, log) = pipeline.withLock { state in
            (state.current!, state.version, state.log(of: thread))
        }
        log?.next = 0
        return (value, version, log)
    }

    /// A read-modify-write made from inside the body of another one on the same thread: applied
    /// once, then replayed (not applied again) when the outer body runs again.
    @usableFromInline
    final func _nestedReadModifyWrite<Result, Failure: Error>(
        _ log: _TransactionLog, isolation: (any Actor)?,
        _ body: (Value) throws(Failure) -> (newValue: Value?, result: Result)
    ) throws(Failure) -> (result: Result, accepted: Bool) {
        if let cached = log.replay(as: (result: Result, accepted: Bool).self) { return cached }
        while true {
            let (current, version) = _snapshot()
            let (newValue, result) = try body(current)
            guard let newValue else {
                let now = pipeline.withLock { ($0.version, $0.terminal == nil) }
                if now.0 == version { return log.record((result, now.1)) }
                continue
            }
            switch _commit(newValue, ifVersion: version, isolation: isolation, deferringDrainTo: log) {
            case .committed: return log.record((result, true))
            case .terminated: return log.record((result, false))
            case .stale: continue
            }
        }
    }

    /// Changes the current value in place under the lock and, when `body` says it changed,
    /// queues the new value as an event. `body` must not run user code; what it returns is
    /// released by the caller, after unlocking. Returns `nil` if the source has terminated.
    /// `body` also gets the source's version before the change (a change moves it by one): how a
    /// caller finds out whether anyone else changed the value since its own last change (see
    /// `ReadOnlyObservableArray._apply`).
    @inlinable
    final func _mutateCurrent<Result>(
        isolation: (any Actor)? = nil,
        _ body: (inout Value, _ version: UInt64) -> (changed: Bool, result: Result)
    ) -> Result? {
        let thread = _currentThreadID()
        var nested: _TransactionLog?
        var claimed: GraphEvent<Value>?  // moved out below: copied once, from the state
        var sequence: UInt64 = 0
        let (result, mustDrain) = pipeline.withLock { state -> (Result?, Bool) in
            // Inside a read-modify-write of this source on this thread: applied once (below),
            // replayed when the outer body runs again.
            nested = state.openTransactions.isEmpty ? nil : state.nestedLog(of: thread)
            if let log = nested, let cached = log.replay(as: Result?.self) { return (cached, false) }
            guard state.terminal == nil else { return (nested?.record(nil) ?? nil, false) }
            let (changed, result) = body(&state.current!, state.version)
            if let log = nested { _ = log.record(Optional(result)) }
            guard changed else { return (result, false) }
            state.version &+= 1
            sequence = state.takeSequence()
            guard nested == nil else {
                return (result, state.enqueue(.broadcast(.value(state.current!), sequence: sequence)))
            }
            let current = state.current!
            guard state.claimOrQueue(.value(current), sequence: sequence) else { return (result, false) }
            claimed = .value(current)
            return (result, true)
        }
        if mustDrain, let nested {
            nested.owesDrain = true  // the outer transaction delivers when it closes
        } else if let event = claimed.take() {
            _deliverClaimed(event, upTo: sequence, drainer: _identity(of: isolation))
        }
        return result
    }

    /// Delivers queued actions until the queue is empty. Only one thread drains at a time; the
    /// others just queue. `drainer` is the identity of the isolation of the code draining (`nil`
    /// when nonisolated): observers living on that actor are called right here.
    @inlinable
    final func _drain(_ drainer: ObjectIdentifier?) {
        if _endDrainWithoutLock() { return }
        _drainQueue(drainer)
    }

    /// The usual end of a drain, where the OS has atomics: nothing was queued while this
    /// drainer delivered, so it stops without taking the lock again (`true`).
    @inlinable
    final func _endDrainWithoutLock() -> Bool {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let watch = _watch {
            return watch._withUnsafeGuaranteedRef {
                unsafeDowncast($0, to: _MembershipWatch.self).endDrainWithoutLock()
            }
        }
        return false
    }

    /// The loop of `_drain`, out of line: its actor paths need a large frame, which the usual
    /// drain (nothing queued) does not pay. Called directly by a drainer that started with an
    /// action in the queue (`_SourceState.enqueue` returned `true`): it has something to take.
    @inlinable @inline(never)
    final func _drainQueue(_ drainer: ObjectIdentifier?) {
        while let action = pipeline.withLock({ $0.next() }) {
            switch action {
            case .broadcast(let event, let sequence):
                _deliver(event, upTo: sequence, drainer: drainer)
            case .replay(let event, let sink):
                // Not to an observer that left before its first event came (`removeObserver`,
                // `removeAllObservers`); a terminated source's late observer never joined.
                if event.isTerminal || hasObserver(sink) { sink.deliver(event, drainer: drainer) }
            case .terminate(let event, let sequence):
                _deliver(event, upTo: sequence, drainer: drainer)
                removeAllObservers()
                _roster.clear()
            }
            if _endDrainWithoutLock() { return }
        }
    }

    /// Delivers the broadcast this caller claimed (see `_SourceState.claimOrQueue`), then what
    /// was queued meanwhile.
    @inlinable
    final func _deliverClaimed(_ event: GraphEvent<Value>, upTo sequence: UInt64, drainer: ObjectIdentifier?)
    {
        _deliver(event, upTo: sequence, drainer: drainer)
        _drain(drainer)
    }

    /// Delivers `event` to the closure observers that joined before `sequence`, in registration
    /// order, from the roster (read again from the node only when its membership changed). As
    /// in the core's `broadcast`, an observer removed on this thread during the loop is not
    /// called after its removal.
    @inlinable
    final func _deliver(_ event: GraphEvent<Value>, upTo sequence: UInt64, drainer: ObjectIdentifier?) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let watch = _watch {
            watch._withUnsafeGuaranteedRef {
                _deliverWatched(
                    event, upTo: sequence, drainer: drainer,
                    watch: unsafeDowncast($0, to: _MembershipWatch.self))
            }
            return
        }
        _deliverUnwatched(event, upTo: sequence, drainer: drainer)
    }

    /// `_deliver` where the OS has no atomics: the node's critical section tells whether its
    /// observers changed. Out of line, so that its frame is not paid where atomics exist.
    @inlinable @inline(never)
    final func _deliverUnwatched(
        _ event: GraphEvent<Value>, upTo sequence: UInt64, drainer: ObjectIdentifier?
    ) {
        var removedOnThisThread = false
        withUnsafeMutablePointer(to: &removedOnThisThread) { flag in
            let node = graphNode
            let (slots, layout, generation) = node._beginBroadcast(flag, unlessGeneration: _roster.generation)
            var dead: [_DeadEntry] = []
            if let slots { _roster.read(slots, generation: generation, dead: &dead) }
            defer { node._endBroadcast(flag, layout: layout, count: slots?.count ?? 0, dead: dead) }
            // The roster keeps the sinks alive for the whole loop: only the drainer replaces it,
            // and a closure never makes this thread drain this source again (it queues).
            do {
                for entry in _roster.entries {
                    if flag.pointee && !node._isSubscribed(bits: entry.bits) { continue }
                    entry.sink._withUnsafeGuaranteedRef { sink in
                        if sink.firstSequence < sequence { sink.deliver(event, drainer: drainer) }
                    }
                }
            }
        }
    }
}

/// The identity of the actor code runs on (`nil`: nonisolated): all a delivery compares, so it
/// is passed around instead of the actor (whose reference counting would cost atomics).
@inlinable @inline(__always)
func _identity(of actor: (any Actor)?) -> ObjectIdentifier? {
    guard let actor else { return nil }
    return ObjectIdentifier(actor)
}

/// What a nested plain set records in its transaction's log (it returns nothing).
@usableFromInline
struct _StoreRecord {
    @usableFromInline init() {}
}

/// What an optimistic commit did.
@usableFromInline
enum _CommitOutcome {
    case committed, stale, terminated
}

/// What the drain loop does next.
@usableFromInline
enum _SourceAction<Value: Sendable> {
    /// Deliver to every observer that joined before `sequence`.
    case broadcast(GraphEvent<Value>, sequence: UInt64)
    /// Deliver to one new observer (its first event).
    case replay(GraphEvent<Value>, to: _EventSink<Value>)
    /// Deliver the terminal event, then remove every observer.
    case terminate(GraphEvent<Value>, sequence: UInt64)
}

/// The state of a source, a pure state machine: each mutation says whether the caller must start
/// draining; the caller performs the actions after unlocking.
@usableFromInline
struct _SourceState<Value: Sendable> {
    /// The current value (`ObservableValue` only).
    @usableFromInline var current: Value?
    /// Whether a drain runs, where the OS has no atomics (see `drainWord`). (Next to `current`,
    /// whose optional tag leaves room for it: a state of a trivial value is a word smaller.)
    @usableFromInline var draining = false
    /// Bumped by every change of `current`, for optimistic read-modify-write.
    @usableFromInline var version: UInt64 = 0
    @usableFromInline var terminal: GraphEvent<Value>?
    /// The first action of a drain, when it found the queue empty (see `enqueue`).
    @usableFromInline var direct: _SourceAction<Value>?
    @usableFromInline var pending: [_SourceAction<Value>?] = []
    @usableFromInline var head = 0
    @usableFromInline var nextSequence: UInt64 = 1
    /// The read-modify-writes in progress, by thread (a handful at most): how a change made
    /// from inside one of them is recognized as nested.
    @usableFromInline var openTransactions: [_OpenTransaction] = []
    /// Where the OS has atomics, the source's `_MembershipWatch`, whose `drain` word says
    /// whether a drain runs instead of `draining`: a drainer that finds nothing queued after a
    /// delivery ends its drain there, without the lock. Unretained: the source owns it.
    @usableFromInline let drainWord: Unmanaged<AnyObject>?
    /// The input node of the operators on this source and the observation feeding it, from
    /// the first operator until the input is retired (see `_OperatorNode.input(of:makeHandler:)`).
    @usableFromInline var operatorInput: _OperatorInputLink<Value>?

    @inlinable
    init(current: Value?, drainWord: Unmanaged<AnyObject>?) {
        self.current = current
        self.drainWord = drainWord
    }

    @inlinable
    mutating func takeSequence() -> UInt64 {
        defer { nextSequence &+= 1 }
        return nextSequence
    }

    /// Makes the caller the drainer if nobody drains (`true`); otherwise (`false`) the drainer
    /// learns that something is queued. `queued`: the caller's first action waits in the queue
    /// (otherwise it delivers that action itself).
    @inlinable
    mutating func startDrain(queued: Bool) -> Bool {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let drainWord {
            return drainWord._withUnsafeGuaranteedRef {
                unsafeDowncast($0, to: _MembershipWatch.self).startDrain(queued: queued)
            }
        }
        if draining { return false }
        draining = true
        return true
    }

    /// The drainer took the last queued action: unless something is queued meanwhile, it may
    /// end its drain without the lock after delivering it.
    @inlinable
    mutating func queueEmptied() {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let drainWord {
            drainWord._withUnsafeGuaranteedRef {
                unsafeDowncast($0, to: _MembershipWatch.self).queueEmptied()
            }
        }
    }

    /// The drainer found the queue empty: the drain ends.
    @inlinable
    mutating func endDrain() {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let drainWord {
            #if OBSERVERGRAPH_INTERNAL_CHECKS
                // With the drain word, a drainer takes the lock only when the word says queued,
                // so it finds an action: getting here means a thread that is not the drainer
                // called `_drain` or `_drainQueue` (it would have taken the drainer's actions).
                precondition(false, "ObserverGraph: a drain found its queue empty with the drain word set")
            #endif
            drainWord._withUnsafeGuaranteedRef {
                unsafeDowncast($0, to: _MembershipWatch.self).endDrain()
            }
            return
        }
        draining = false
    }

    /// Queues `action`; returns `true` when nobody is draining, so the caller must drain.
    @inlinable
    mutating func enqueue(_ action: _SourceAction<Value>) -> Bool {
        guard startDrain(queued: true) else {
            pending.append(action)
            return false
        }
        // Nobody delivers and nothing waits (the queue is empty whenever nobody drains): the
        // usual case, handed over in one slot instead of through the array.
        direct = action
        return true
    }

    /// Queues the broadcast of `event` when a drain is running, and returns `false`. Otherwise
    /// nothing waits (the queue is empty whenever nobody drains): the caller becomes the drainer
    /// and delivers `event` itself, before draining what arrives meanwhile. Returns `true`.
    @inlinable
    mutating func claimOrQueue(_ event: @autoclosure () -> GraphEvent<Value>, sequence: UInt64) -> Bool {
        guard startDrain(queued: false) else {
            pending.append(.broadcast(event(), sequence: sequence))
            return false
        }
        return true
    }

    /// The next action, moved out of the queue (so that whatever it holds is released by the
    /// caller, after unlocking); `nil` when the queue is empty, which ends the drain.
    @inlinable
    mutating func next() -> _SourceAction<Value>? {
        if let action = direct {
            direct = nil
            if head == pending.count { queueEmptied() }
            return action
        }
        if head < pending.count {
            let action = pending[head]
            pending[head] = nil
            head += 1
            if head == pending.count {
                pending.removeAll(keepingCapacity: pending.count <= 64)
                head = 0
                queueEmptied()
            } else if head >= 64 && head * 2 >= pending.count {
                // Under steady load the queue may never run empty: drop the delivered prefix
                // now and then, so it stays as long as what is waiting (amortized O(1)).
                pending.removeFirst(head)
                head = 0
            }
            return action
        }
        endDrain()
        return nil
    }
}

/// A read-modify-write in progress on one thread, with the log of its nested changes (allocated
/// only when one happens).
@usableFromInline
struct _OpenTransaction {
    @usableFromInline let thread: UInt
    @usableFromInline var log: _TransactionLog?

    @usableFromInline init(thread: UInt) {
        self.thread = thread
    }
}

/// The results of the nested changes made by one open transaction, in call order. Used only by
/// the transaction's own thread, so it needs no lock.
@usableFromInline
final class _TransactionLog {
    @usableFromInline var results: [Any] = []
    /// Results of nested changes a rerun no longer makes (it diverged): kept until the log goes,
    /// which is after unlocking (see `_SourceState.close`), since `replay` runs under the lock
    /// and a result may be a user's object.
    @usableFromInline var discarded: [Any] = []
    /// The next nested change's position: a rerun of the outer body starts again at 0.
    @usableFromInline var next = 0
    /// A nested change queued events and took the drain: the outer transaction must drain when
    /// it closes (so that no observer runs while it is open on this thread).
    @usableFromInline var owesDrain = false

    @usableFromInline init() {}

    /// The recorded result of the next nested change when this is a rerun that reached one
    /// already applied (then it is not applied again); `nil` when it must be applied now.
    @inlinable
    func replay<T>(as type: T.Type) -> T? {
        guard next < results.count, let cached = results[next] as? T else {
            if next < results.count {  // the rerun diverged: the rest is released with the log
                discarded.append(contentsOf: results[next...])
                results.removeSubrange(next...)
            }
            return nil
        }
        next += 1
        return cached
    }

    /// Records the result of a nested change just applied, and returns it.
    @inlinable
    func record<T>(_ result: T) -> T {
        results.append(result)
        next += 1
        return result
    }
}

extension _SourceState {
    /// Opens a transaction for `thread`, or returns the log of the one already open on it (the
    /// call is nested).
    @inlinable
    mutating func open(_ thread: UInt) -> _TransactionLog? {
        if !openTransactions.isEmpty, let log = nestedLog(of: thread) { return log }
        openTransactions.append(_OpenTransaction(thread: thread))
        return nil
    }

    /// The log of the transaction open on `thread` (created on first use), or `nil` if none is.
    @inlinable
    mutating func nestedLog(of thread: UInt) -> _TransactionLog? {
        guard let index = openTransactions.lastIndex(where: { $0.thread == thread }) else { return nil }
        if let log = openTransactions[index].log { return log }
        let log = _TransactionLog()
        openTransactions[index].log = log
        return log
    }

    /// The log of the transaction open on `thread`, if it has one.
    @inlinable
    func log(of thread: UInt) -> _TransactionLog? {
        openTransactions.last(where: { $0.thread == thread })?.log
    }

    /// Closes the transaction open on `thread`; `true` when it owes a drain. Its log goes to
    /// `closedLog`, for the caller to release after unlocking: it holds the results of the
    /// nested changes, which may be a user's objects.
    @inlinable
    mutating func close(_ thread: UInt, keeping closedLog: inout _TransactionLog?) -> Bool {
        if let last = openTransactions.last, last.thread == thread {  // the usual case: one open
            closedLog = openTransactions.removeLast().log
            return closedLog?.owesDrain ?? false
        }
        guard let index = openTransactions.lastIndex(where: { $0.thread == thread }) else { return false }
        closedLog = openTransactions.remove(at: index).log
        return closedLog?.owesDrain ?? false
    }
}
