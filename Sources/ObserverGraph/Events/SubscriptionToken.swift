import Dispatch

/// Keeps a closure observation alive; cancels it on `cancel()` or when deallocated.
///
/// Returned by the `observe` and `observeValues` families (`observe(isolation:_:)`,
/// `observeNonisolated(_:)`, `observe(on:_:)`, …). Keep it (in a property or a `TokenBag`) for
/// as long as you want the closure to be called.
///
/// A closure called on the delivering thread or on a queue (`observeNonisolated(_:)`,
/// `observe(on:_:)`): after `cancel()` returns, it is never called again, whatever thread was
/// delivering. If deliveries are running on other threads at that moment (several, with a
/// concurrent queue), `cancel()` waits for them to finish: so cancelling, and dropping the
/// token, can block. Do not cancel while holding a lock that the closure takes, nor from a
/// closure whose own delivery the other closure waits for. Cancelling from inside the closure
/// itself returns at once.
///
/// A closure that runs on an actor (`observe(isolation:_:)`): cancelled on that actor, it is
/// never called after `cancel()` returns; cancelled elsewhere, it is not called after the
/// actor's current turn (a call may be running on the actor at that moment). Cancelling it never
/// blocks.
///
/// Cancelling releases the closure and what it captured (once a call running elsewhere ends).
///
/// Thread safety: `Sendable`; `cancel()` may be called from any thread, any number of times.
/// Callbacks: none, besides the closure it owns.
public final class SubscriptionToken: Sendable {
    private let target: _SubscriptionTarget

    @usableFromInline
    init(_ target: _SubscriptionTarget) {
        self.target = target
    }

    deinit {
        target._cancel()
    }

    /// Stops the observation, and the observer leaves the source's observer list. A closure
    /// called on the delivering thread or on a queue: no call of it starts after this returns,
    /// and one running on another thread has finished. A closure on an actor: cancelled on that
    /// actor, no call after this returns; cancelled elsewhere, none after the actor's current
    /// turn, and this never waits (see `SubscriptionToken`).
    ///
    /// Thread safety: safe from any thread, also from inside the closure.
    /// Callbacks: the source's `observer(_:didSubscribe: false)` (a no-op for the kit's types).
    /// - Complexity: expected O(1), plus the wait for a delivery in progress on another thread
    ///   (never for a closure on an actor).
    public func cancel() {
        target._cancel()
    }

    /// Whether the observation ended for good: the token was cancelled, the source delivered a
    /// terminal event (a source that goes away delivers `.finished`; a values-only observation,
    /// which that event calls nothing of, ends as the source goes, unless events wait for it on
    /// its actor), or (an observation on an actor) its actor went, found by the next event
    /// (see `GraphEventSource.observe(isolation:_:)`). A closure observer that someone removed
    /// from the source's observer list (`removeObserver(_:)`, `removeAllObservers()`) is not
    /// cancelled: nothing reaches it while it is out of the list, and it is delivered to again if
    /// added back, so this stays `false` (`hasObserver(_:)` of the source tells whether it is in
    /// the list). A coalesced observation (of an array, a sectioned array or a value) and the
    /// observation of a `values()` sequence are the exceptions: taken out of the list, they end,
    /// and this is `true` (added back, they stay ended: they count as observers, and get nothing).
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var isCancelled: Bool {
        target._isClosed
    }

    /// Adds this token to `bag`, which keeps it until the bag is cancelled or deallocated.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: amortized O(1).
    public func store(in bag: TokenBag) {
        bag.insert(self)
    }
}

/// Collects tokens and cancels them all at once, or when it is deallocated: keep one per owner.
///
///     let bag = TokenBag()
///     wallet.credits.observeValues { print($0) }.store(in: bag)
///
/// Thread safety: `Sendable`; every method is safe from any thread.
/// Callbacks: none.
public final class TokenBag: Sendable {
    private let tokens = GraphLock<[SubscriptionToken]>([])

    /// Creates an empty bag.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init() {}

    deinit {
        cancelAll()
    }

    /// Keeps `token` until `cancelAll()` or deinit.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: amortized O(1).
    public func insert(_ token: SubscriptionToken) {
        tokens.withLock { $0.append(token) }
    }

    /// Cancels and drops every token in the bag; the bag can be used again afterwards.
    ///
    /// Thread safety: safe from any thread. Callbacks: see `SubscriptionToken.cancel()`.
    /// - Complexity: O(n), n = number of tokens.
    public func cancelAll() {
        let taken = tokens.withLock { tokens in
            defer { tokens = [] }
            return tokens
        }
        for token in taken { token.cancel() }
    }

    /// How many tokens the bag holds.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var count: Int {
        tokens.withLock { $0.count }
    }
}

/// What a token cancels: a closure observer (`_EventSink`), or what keeps a derived source
/// alive around one (`_KeepAliveTarget`); never made on its own. A class rather than a
/// protocol, so that a token holds one word instead of an existential's two (and its object is
/// one allocation size class smaller).
///
/// Thread safety: `Sendable`; each subclass makes its overrides safe from any thread.
@usableFromInline
class _SubscriptionTarget: @unchecked Sendable {
    @inlinable init() {}

    /// Ends the observation, once; later calls do nothing. Every subclass overrides it (the
    /// check that one forgot to is the tests', which run with assertions).
    @usableFromInline func _cancel() {
        assertionFailure("ObserverGraph: a subscription target without its own _cancel()")
    }

    /// Whether the observation ended for good. Every subclass overrides it.
    @usableFromInline var _isClosed: Bool {
        assertionFailure("ObserverGraph: a subscription target without its own _isClosed")
        return true
    }
}

/// A closure observer: a real `GraphObserver` in its source's observer list, kept alive by its
/// token (the node holds it weakly, like any class observer; the source's delivery roster holds
/// it strongly until the next delivery after it left, which reads the node again and drops it).
///
/// Three ways to run the closure:
/// - nonisolated: on the delivering thread; `cancel()` waits for calls running elsewhere;
/// - on a `DispatchQueue`: asynchronously, in order when the queue is serial;
/// - on an actor: through a first-in, first-out mailbox drained on the actor, by at most one
///   task at a time; synchronously, after what is queued, when the delivering code already
///   runs on that actor (for the main actor, also code with no isolation on the main queue).
///   Calls happen only on the actor, so `cancel()` never waits.
@usableFromInline
final class _EventSink<Value: Sendable>: _SubscriptionTarget, GraphObserver, @unchecked Sendable {
    /// The closure. For an actor sink it is the actor-isolated closure the user wrote, called
    /// only on that actor (what makes this class `@unchecked Sendable`).
    @usableFromInline typealias Handler = (GraphEvent<Value>) -> Void

    @usableFromInline enum Mode {
        case nonisolated
        case queue(DispatchQueue)
        case actor(any Actor)
    }

    /// The sequence number of the source's queue at the moment it joined: it receives the
    /// broadcasts queued after that, never the earlier ones.
    @usableFromInline let firstSequence: UInt64
    /// The queue of a `.queue` sink; `nil` for the other modes. (An actor sink's actor is in
    /// `state`: held weakly, or marked by a flag if it is the main actor; an actor keeps its
    /// tokens, and must not keep itself alive through them.)
    @usableFromInline let queue: DispatchQueue?
    /// For `.actor` sinks, the actor's identity; `nil` for the other modes. The delivery path
    /// compares it with the drainer's without retaining the actor.
    @usableFromInline let actorIdentity: ObjectIdentifier?
    /// For `.actor` sinks on an actor other than the main actor, the actor, unowned: it keeps
    /// the actor's memory, never the actor alive (its deinit runs when its last strong
    /// reference goes), so no other actor can be allocated at its address while this sink
    /// lives, and `actorIdentity` names this actor only. Never read.
    @usableFromInline unowned let _actorPin: (any Actor)?
    /// The sink was made with `.nonisolated`.
    @usableFromInline let isNonisolated: Bool
    /// A values-only closure: a terminal event calls nothing of it, only closes the observation,
    /// so a source's deinit may close it directly (see `_endQuietly()`).
    @usableFromInline let _valuesOnly: Bool
    /// A main-actor closure whose observation was made on the main queue: the main actor runs
    /// there, so a delivery with no isolation made on the main queue may call it at once (see
    /// `_MainActorCheck`). Checked where the observation is made, which always runs on the
    /// main actor: a program whose main actor runs elsewhere (a custom main executor) gets
    /// `false` here, and every such delivery then goes through the mailbox. (Not covered: such a
    /// program observing from inside `DispatchQueue.main.sync { }` would get `true`.)
    @usableFromInline let _mainQueueIsMainActor: Bool
    /// A sink that ends when it is taken out of the observer list by anything but its own cancel
    /// (`removeObserver`, `removeAllObservers`). One that feeds a coalescing observation (of an
    /// array, a sectioned array or a value, see `_Coalescer`) tells that observation, which then
    /// ends: it cannot know what changed while it was out. One that feeds a `values()` sequence
    /// closes, as a cancel would: its closure goes, and with it the stream (see `_StreamFeed`),
    /// so that the loop ends instead of waiting for events that can no longer come.
    @usableFromInline let _endsOnRemoval: Bool
    @usableFromInline let state: GraphLock<_SinkState<Value>>
    /// A nonisolated sink's call gate (`_CallGate<Value>`, where the OS has atomics): its calls
    /// and `close()` meet on one atomic word instead of two critical sections per call. `nil`
    /// for the other modes, which use `state`. (Typed `AnyObject` because the gate's type needs
    /// macOS 15 / iOS 18 and a stored property cannot.) Retained once here, released by the
    /// deinit: a delivery borrows it, with no reference count per call.
    @usableFromInline let _gate: Unmanaged<AnyObject>?
    /// An actor sink's fast path (`_ActorGate<Value>`, where the OS has atomics); `nil` for the
    /// other modes. Held like `_gate`.
    @usableFromInline let _actorGate: Unmanaged<AnyObject>?
    /// The handler of a kit-internal sink (an operator graph's input), called with no gate: a
    /// call that races its cancel feeds an input that was retired (it has no edge left, so it
    /// delivers nothing). The handler, and the input node it holds, go with the sink, which
    /// the source's delivery roster drops at its next delivery (or deinit). `nil` for every
    /// observation a user makes. Held like `_gate`, in a box whose closure a delivery calls
    /// with no reference count (an optional closure, copied out to be called, cost a retain and
    /// a release of its context per event).
    @usableFromInline let _direct: Unmanaged<_Handler<Value>>?
    // Written once, in init; read from any thread.
    @usableFromInline weak var source: GraphEventSource<Value>?
    /// Set by a cancel made from inside the closure while the actor runs the mailbox; touched
    /// only on that actor's running thread (see `close()`).
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var _stoppedOnActor = false

    /// Inlinable so that it is specialized with its source's `_join`.
    @inlinable
    init(
        firstSequence: UInt64, mode: Mode, handler: _Handler<Value>.Body, source: GraphEventSource<Value>,
        direct: Bool = false, endsOnRemoval: Bool = false
    ) {
        self.firstSequence = firstSequence
        var directCall: Handler?
        if direct, case .events(let call) = handler { directCall = call }
        // Not `directCall.map { }`: a closure passed through a generic function is called through
        // two reabstraction thunks.
        if let directCall {
            _direct = Unmanaged.passRetained(_Handler(events: directCall))
        } else {
            _direct = nil
        }
        _endsOnRemoval = endsOnRemoval
        var isolation: (any Actor)?
        if case .values = handler { _valuesOnly = true } else { _valuesOnly = false }
        switch mode {
        case .nonisolated:
            actorIdentity = nil
            _actorPin = nil
            isNonisolated = true
            queue = nil
            _mainQueueIsMainActor = false
        case .queue(let queue):
            actorIdentity = nil
            _actorPin = nil
            isNonisolated = false
            self.queue = queue
            _mainQueueIsMainActor = false
        case .actor(let actor):
            let identity = ObjectIdentifier(actor)
            actorIdentity = identity
            // The main actor lives as long as the process: it needs no pin (see `_actorPin`).
            let onMain = identity == _MainActorCheck.mainActor
            _actorPin = onMain ? nil : actor
            isNonisolated = false
            queue = nil
            isolation = actor
            // Made on `actor` (an `isolated` parameter brought it here).
            _mainQueueIsMainActor = onMain && _MainActorCheck.isCurrent()
        }
        if directCall != nil {
            _gate = nil
            _actorGate = nil
            self.state = GraphLock(_SinkState(handler: _Handler(handler)))  // for `_isClosed`
        } else if isNonisolated, #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            _usesAtomics
        {
            _gate = Unmanaged.passRetained(_CallGate(_Handler(handler)))
            _actorGate = nil
            self.state = GraphLock(_SinkState(handler: nil))
        } else if actorIdentity != nil, #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            _usesAtomics
        {
            let box = _Handler(handler)
            _gate = nil
            _actorGate = Unmanaged.passRetained(_ActorGate(box))
            self.state = GraphLock(_SinkState(handler: box, actor: isolation))
        } else {
            _gate = nil
            _actorGate = nil
            self.state = GraphLock(_SinkState(handler: _Handler(handler), actor: isolation))
        }
        self.source = source
        super.init()
    }

    deinit {
        _gate?.release()
        _actorGate?.release()
        _direct?.release()
    }

    /// Delivers `event`: now, on the sink's queue, or on its actor. `drainer` is the identity of
    /// the isolation of the code delivering (the actor it runs on, `nil` when nonisolated).
    /// `fromDeinit`: a source's deinit delivers, wherever its last reference went (inside a
    /// mutation of the app's state, say), so a main-actor closure is never called from there,
    /// only queued (see `_deliverLater(_:mayCallNow:)`).
    @inlinable
    func deliver(
        _ event: GraphEvent<Value>, drainer: ObjectIdentifier?, thread: UInt = 0, fromDeinit: Bool = false
    ) {
        if let direct = _direct {
            direct._withUnsafeGuaranteedRef { $0.events(event) }
            return
        }
        // The two synchronous cases first.
        if isNonisolated {
            deliverNow(event, thread: thread)
            return
        }
        if let actorIdentity, drainer == actorIdentity {
            _deliverOnActor(event)
            return
        }
        _deliverLater(event, mayCallNow: drainer == nil && !fromDeinit)
    }

    /// `deliver(_:drainer:thread:)` from another thread or actor to an actor's closure (into its
    /// mailbox), or to a queue's. Out of line: starting a task takes a large frame, which the
    /// synchronous paths above do not pay.
    ///
    /// A delivery with no isolation (`mayCallNow`: not from a source's deinit) made on the main
    /// queue, to a main-actor closure, calls it now, as a delivery made with the main actor's
    /// isolation does (see `_mainQueueIsMainActor` and `_MainActorCheck`).
    @inlinable @inline(never)
    func _deliverLater(_ event: GraphEvent<Value>, mayCallNow: Bool) {
        if actorIdentity != nil {
            // Whether this runs on the main actor is asked (about 10 ns, no user code: under the
            // lock, held that much longer) only when the answer matters: while the mailbox is
            // being run, the event joins it either way (on the main queue, this is a call from
            // inside that run), as during a burst from a thread.
            let askMainActor = mayCallNow && _mainQueueIsMainActor
            // From another thread or actor: into the mailbox. The actor itself is copied out of
            // the state (a reference count, an atomic on an object the actor's thread also
            // uses) only when a task must be started.
            let scheduling = state.withLock { state -> _Scheduling in
                guard state.handler != nil else { return .nothing }
                if askMainActor, !state.running, _MainActorCheck.isCurrent() { return .callNow }
                state.mailbox.append(event)
                // A fast call running on the actor runs the mailbox when it ends.
                if _markSlow() { return .nothing }
                // A scheduled task or a run holds the actor: it is loaded only when neither does.
                guard !state.scheduled, !state.running else { return .nothing }
                guard let actor = state.actor else {
                    // The actor is gone: nothing can run the closure any more, so the
                    // observation ends as a cancel would end it.
                    defer { (state.handler, state.mailbox) = (nil, []) }
                    return .ended(state.handler, state.mailbox)
                }
                state.scheduled = true
                return .task(actor)
            }
            switch scheduling {
            case .nothing: break
            case .callNow: _deliverOnActor(event)  // which decides again under the lock
            case .task(let actor): _startMailboxTask(on: actor)
            case .ended(let handler, let dropped):
                withExtendedLifetime((handler, dropped)) {}  // released with no lock held
                _cancel()  // the gate closed, and out of the source's list, as a cancel does
            }
            return
        }
        if let queue {
            queue.async { self.deliverNow(event) }
        } else {
            deliverNow(event)
        }
    }

    /// `deliver(_:drainer:thread:)`, never inlined: for a broadcast loop, whose every other
    /// observer goes straight to its call gate.
    @usableFromInline @inline(never)
    func _deliverOutOfLine(_ event: GraphEvent<Value>, drainer: ObjectIdentifier?, thread: UInt) {
        deliver(event, drainer: drainer, thread: thread)
    }

    /// What a delivery to an actor's closure does once it has left the sink's lock (see
    /// `_deliverLater`).
    @usableFromInline
    enum _Scheduling {
        case nothing
        /// This runs on the main actor, where the closure lives, and no mailbox run is under
        /// way: call it now (see `_deliverLater(_:mayCallNow:)`).
        case callNow
        /// Starts a task on the actor to run the mailbox.
        case task(any Actor)
        /// The actor is gone: what the sink let go of, to release with no lock held.
        case ended(_Handler<Value>?, [GraphEvent<Value>])
    }

    /// What delivering on the actor starts with.
    @usableFromInline
    enum _ActorStart {
        case nothing
        case direct(_Handler<Value>)
        case mailbox
    }

    /// Delivers `event` from code running on this sink's actor: called right away when nothing
    /// is queued before it (through the actor gate, one atomic exchange each way, where the OS
    /// has atomics; otherwise two critical sections); queued behind earlier events otherwise,
    /// which run now; queued behind the running call when the closure itself sent it (no nested
    /// calls). A terminal event always takes the lock path.
    @inlinable
    func _deliverOnActor(_ event: GraphEvent<Value>) {
        if !event.isTerminal, #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate,
            gate._withUnsafeGuaranteedRef({
                unsafeDowncast($0, to: _ActorGate<Value>.self).callIfIdle(event, sink: self)
            })
        {
            return
        }
        let thread = _currentThreadID()
        let start = state.withLock { state -> _ActorStart in
            guard let handler = state.handler else { return .nothing }
            // A fast call running (the closure sent to its own source) runs it when it ends.
            if _markSlow() || state.running {
                state.mailbox.append(event)
                return .nothing
            }
            state.running = true
            state.deliveringThread = thread
            guard state.mailbox.isEmpty else {
                state.mailbox.append(event)
                return .mailbox
            }
            if event.isTerminal { state.handler = nil }
            return .direct(handler)
        }
        switch start {
        case .nothing: return
        case .direct(let handler):
            if event.isTerminal { _closeActorGate() }
            handler.call(event)
        case .mailbox: break
        }
        _continueMailbox()
    }

    /// Calls the closure now, on this thread. `thread` is this thread's `_currentThreadID()`
    /// when the caller has it already (a broadcast reads it once for all its observers), 0
    /// otherwise.
    @inlinable
    func deliverNow(_ event: GraphEvent<Value>, thread: UInt = 0) {
        let thread = thread != 0 ? thread : _currentThreadID()
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let gate = _gate {
            gate._withUnsafeGuaranteedRef {
                unsafeDowncast($0, to: _CallGate<Value>.self).deliver(
                    event, sink: Unmanaged.passUnretained(self), thread: thread)
            }
            return
        }
        var handler: _Handler<Value>? = state.withLock { state in
            guard let handler = state.handler else { return nil }
            state.beginCall(on: thread)
            if event.isTerminal { state.handler = nil }
            return handler
        }
        guard handler != nil else { return }
        handler?.call(event)
        // Dropped before a closer waiting for this call wakes: the closure is then released by
        // the closer, before its cancel() returns (unless this event was terminal).
        handler = nil
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            state.endCall(on: thread)
            guard !state.waiters.isEmpty else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Starts the task that runs the mailbox on `actor`. On the main actor, the task starts
    /// there: its first job goes straight to the main actor's executor. A task of a
    /// nonisolated closure would start on the shared pool of threads, then hop, so a main-actor
    /// closure would wait for a free thread of that pool (77 s, measured in the test suite under
    /// the thread sanitizer, with its stress tests holding every thread of the pool).
    @inlinable
    func _startMailboxTask(on actor: any Actor) {
        if ObjectIdentifier(actor) == _MainActorCheck.mainActor {
            Task { @MainActor in self._runMailboxTask(isolation: MainActor.shared) }
        } else {
            Task { await self._runMailboxTask(isolation: actor) }
        }
    }

    /// The mailbox task's turn on the actor.
    @inlinable
    func _runMailboxTask(isolation actor: isolated any Actor) {
        state.withLock { $0.scheduled = false }
        _runMailbox()
    }

    /// Calls the closure with each queued event, in order, until none is left. Runs on the sink's
    /// actor only. If a run is already in progress further up this stack (the closure sent to
    /// its own source), returns at once: that run delivers what was just queued, after the
    /// current call returns, so calls never nest.
    ///
    /// Events are taken in batches, one critical section each, so that a sender on another
    /// thread and the actor rarely meet on the lock. A cancel made on the actor from inside the
    /// closure stops the batch at once (`_stoppedOnActor`); one made elsewhere takes effect at
    /// the next batch, within the actor's current turn.
    @inlinable
    func _runMailbox() {
        let thread = _currentThreadID()
        let claimed = state.withLock { state -> Bool in
            guard !state.running, state.handler != nil, !state.mailbox.isEmpty else {
                if !state.running && !state.scheduled && state.mailbox.isEmpty { _clearSlow() }
                return false
            }
            state.running = true
            state.deliveringThread = thread
            return true
        }
        if claimed { _continueMailbox() }
    }

    /// Runs the mailbox, in batches, until it is empty; the caller has claimed `running`.
    @inlinable
    func _continueMailbox() {
        var spare: [GraphEvent<Value>] = []
        while true {
            let taken = state.withLock { state -> (_Handler<Value>, [GraphEvent<Value>])? in
                guard !_stoppedOnActor, let handler = state.handler, !state.mailbox.isEmpty else {
                    state.running = false
                    state.deliveringThread = 0
                    if state.mailbox.isEmpty && !state.scheduled { _clearSlow() }
                    return nil
                }
                return (handler, state.takeMailbox(giving: &spare))
            }
            guard let (handler, batch) = taken else { return }
            for event in batch {
                if event.isTerminal {
                    state.withLock { $0.handler = nil }
                    _closeActorGate()
                }
                handler.call(event)
                if _stoppedOnActor { break }
            }
            spare = batch
            spare.removeAll(keepingCapacity: true)
        }
    }

    /// Stops delivery. A nonisolated or queue sink returns once no call runs on another thread
    /// (there can be several with a concurrent queue), except when the canceller is itself inside
    /// a call of this closure: then it returns at once, because waiting for the others could wait
    /// forever (two calls cancelling each other). An actor sink never waits: its calls run only
    /// on its actor. Drops the closure and queued events with no lock held.
    func close() {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let gate = _gate {
            gate._withUnsafeGuaranteedRef { unsafeDowncast($0, to: _CallGate<Value>.self).close(sink: self) }
            return
        }
        let thread = _currentThreadID()
        var stopsBatch = false
        var released: _Handler<Value>?
        // An actor sink's fast path: closed at once; a fast call running now releases the
        // closure when it ends.
        var releasedByGate: _Handler<Value>?
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        {
            releasedByGate = unsafeDowncast(gate, to: _ActorGate<Value>.self).close()
        }
        var dropped: [GraphEvent<Value>] = []
        while true {
            let (handler, wait) = state.withLock { state -> (_Handler<Value>?, DispatchSemaphore?) in
                let handler = state.handler
                state.handler = nil
                state.onMainActor = false
                state.weakActor = nil
                if !state.mailbox.isEmpty { swap(&dropped, &state.mailbox) }
                if state.running && state.deliveringThread == thread { stopsBatch = true }
                if state.isCalling(on: thread) { return (handler, nil) }
                guard state.isCalling(besides: thread) else { return (handler, nil) }
                let semaphore = DispatchSemaphore(value: 0)
                state.waiters.append(semaphore)
                return (handler, semaphore)
            }
            if released == nil { released = handler }
            guard let wait else { break }
            wait.wait()  // signalled whenever a delivery ends; then check again
        }
        // Written only here, on the thread that is running the mailbox (the actor), and read by
        // that run after the closure returns: the same thread, so no lock is needed.
        if stopsBatch { _stoppedOnActor = true }
        withExtendedLifetime((released, releasedByGate, dropped)) {}
    }

    /// For the deinit of this sink's source, which is about to deliver `.finished` to it (see
    /// `GraphEventSource._finishAtDeinit`): ends a values-only observation at once when that
    /// event would call nothing and only close it, and returns `true`. That is so for a
    /// nonisolated one, and for one on an actor with nothing queued and no run under way (checked
    /// and closed in one critical section); its closure is then released on this thread, as a
    /// `cancel()` made here would release it. `false` when the event must be delivered: an event
    /// closure, a queue's (blocks already sent to the queue come first), an actor's that has
    /// events to run first.
    ///
    /// Nothing else delivers to this sink meanwhile: its only source is going, and a delivery
    /// keeps its source alive.
    /// - Complexity: O(1).
    @usableFromInline
    func _endQuietly() -> Bool {
        guard _valuesOnly else { return false }
        if isNonisolated {
            close()
            return true
        }
        guard actorIdentity != nil else { return false }
        // The fast path first, as `close()` does: closed, it hands back its box (no fast call can
        // be running: they come from the source's deliveries). Closing it is right either way:
        // if the mailbox must run first, the lock path delivers the rest.
        var releasedByGate: _Handler<Value>?
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        {
            releasedByGate = unsafeDowncast(gate, to: _ActorGate<Value>.self).close()
        }
        let released = state.withLock { state -> _Handler<Value>?? in
            guard state.handler != nil, state.mailbox.isEmpty, !state.running, !state.scheduled else {
                return .none
            }
            defer {
                state.handler = nil
                state.onMainActor = false
                state.weakActor = nil
            }
            return .some(state.handler)
        }
        withExtendedLifetime((released, releasedByGate)) {}  // released with no lock held
        return released != nil
    }

    /// Closes the actor gate after a terminal event, as the lock state's `handler` is: the
    /// closure is released once the last call returns. Runs with no lock held.
    @inlinable
    func _closeActorGate() {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        else {
            return
        }
        let released = unsafeDowncast(gate, to: _ActorGate<Value>.self).close()
        withExtendedLifetime(released) {}
    }

    /// Sets the actor gate's `slow` flag (the mailbox path owns the sink); under the lock.
    /// Returns whether a fast call is running, whose end will run the mailbox.
    @inlinable
    func _markSlow() -> Bool {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        else {
            return false
        }
        return unsafeDowncast(gate, to: _ActorGate<Value>.self).setSlow()
    }

    /// Clears the actor gate's `slow` flag once the mailbox path is idle; under the lock.
    @inlinable
    func _clearSlow() {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        else {
            return
        }
        unsafeDowncast(gate, to: _ActorGate<Value>.self).clearSlow()
    }

    /// The end of a fast call that found the gate changed: releases the closure if the sink was
    /// closed meanwhile; runs the mailbox (on the actor, now) if events were queued meanwhile.
    @usableFromInline
    func _afterFastCall() {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
            let gate = _actorGate?.takeUnretainedValue()
        else {
            return
        }
        let thread = _currentThreadID()
        let (released, mustRun) = state.withLock { state -> (_Handler<Value>?, Bool) in
            let (released, queued) = unsafeDowncast(gate, to: _ActorGate<Value>.self).endInterruptedCall()
            guard queued, state.handler != nil, !state.running else { return (released, false) }
            state.running = true
            state.deliveringThread = thread
            return (released, true)
        }
        withExtendedLifetime(released) {}
        if mustRun { _continueMailbox() }
    }

    @usableFromInline
    override func _cancel() {
        close()
        source?.removeObserver(self)
    }

    /// Ends a sink that ends on removal (`_endsOnRemoval`): tells a coalescing observation that
    /// its sink left the observer list, closes a stream's sink; nothing for every other sink.
    /// Called by the core after each removal, with no lock held. (After the sink's own cancel
    /// too: closing a closed sink is one atomic load, or one critical section without atomics.)
    @usableFromInline
    func didUnsubscribe(from observable: any GraphObservable) {
        guard _endsOnRemoval else { return }
        if let direct = _direct {
            direct._withUnsafeGuaranteedRef { $0.events(.failed(_LeftTheObserverList())) }
        } else {
            close()
        }
    }

    @usableFromInline
    override var _isClosed: Bool {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), let gate = _gate {
            return gate._withUnsafeGuaranteedRef { unsafeDowncast($0, to: _CallGate<Value>.self).isClosed }
        }
        return state.withLock { $0.handler == nil }
    }

    /// `closure@abcd`: a closure observer in diagrams and graph exports.
    @usableFromInline var graphDisplayName: String {
        "closure@" + observerID.shortID
    }
}

@usableFromInline
struct _SinkState<Value: Sendable> {
    /// `nil` once cancelled or terminated.
    @usableFromInline var handler: _Handler<Value>?
    /// The thread running the handler right now (0: none); with a concurrent queue, the others
    /// running it at the same time are in `moreCalls`. One thread needs no array operation.
    @usableFromInline var calling: UInt = 0
    @usableFromInline var moreCalls: [UInt] = []
    /// Cancellers on other threads waiting for the running delivery to end.
    @usableFromInline var waiters: [DispatchSemaphore] = []
    /// Actor sinks: events waiting for the actor, oldest first.
    @usableFromInline var mailbox: [GraphEvent<Value>] = []
    /// Actor sinks: the thread running the mailbox right now (0 when none).
    @usableFromInline var deliveringThread: UInt = 0
    /// Actor sinks on any other actor than the main actor: the actor, held weakly (an actor
    /// that keeps its token, the usual place, would otherwise keep itself alive through it),
    /// until the sink is closed. `nil` for the other sinks.
    @usableFromInline weak var weakActor: (any Actor)?
    // The flags last, side by side: the state of a sink (in its lock's object) stays 16 bytes
    // smaller than with a flag between words.
    /// A call gate's call ended with cancellers waiting: one of them releases the closure.
    @usableFromInline var releaseHandedOff = false
    /// Actor sinks: a task is on its way to run the mailbox.
    @usableFromInline var scheduled = false
    /// Actor sinks: the mailbox is being run on the actor right now.
    @usableFromInline var running = false
    /// Actor sinks on the main actor, until the sink is closed: the actor is `MainActor.shared`.
    /// It lives as long as the process, so it needs no reference here (a weak one would give it
    /// a side table, which makes every count of a reference to it, each `MainActor.shared`,
    /// each task on it, several times slower, in the whole app).
    @usableFromInline var onMainActor = false

    /// The sink's actor while it is open: the main actor, or the other actor if it is alive.
    @inlinable
    var actor: (any Actor)? {
        onMainActor ? MainActor.shared : weakActor
    }

    /// Inlinable so that it is specialized with its sink's initializer (the generic one looks up
    /// the metadata of its mailbox's element type).
    @inlinable init(handler: _Handler<Value>?, actor: (any Actor)? = nil) {
        self.handler = handler
        guard let actor else { return }
        if ObjectIdentifier(actor) == ObjectIdentifier(MainActor.shared) {
            onMainActor = true
        } else {
            weakActor = actor
        }
    }

    /// Whether this caller releases the closure (see `releaseHandedOff`); only the first does.
    @inlinable
    mutating func takeHandedOffRelease() -> Bool {
        defer { releaseHandedOff = false }
        return releaseHandedOff
    }

    /// Records that `thread` starts a call of the handler.
    @inlinable
    mutating func beginCall(on thread: UInt) {
        if calling == 0 { calling = thread } else { moreCalls.append(thread) }
    }

    /// Records that the call `thread` started has returned.
    @inlinable
    mutating func endCall(on thread: UInt) {
        if calling == thread {
            calling = moreCalls.popLast() ?? 0
        } else if let index = moreCalls.firstIndex(of: thread) {
            moreCalls.remove(at: index)
        }
    }

    /// Whether `thread` is inside a call of the handler.
    @inlinable
    func isCalling(on thread: UInt) -> Bool {
        calling == thread || moreCalls.contains(thread)
    }

    /// Whether a thread other than `thread` is inside a call of the handler.
    @inlinable
    func isCalling(besides thread: UInt) -> Bool {
        (calling != 0 && calling != thread) || moreCalls.contains { $0 != thread }
    }

    /// The queued events, leaving `spare` (empty, with its capacity) in their place.
    @inlinable
    mutating func takeMailbox(giving spare: inout [GraphEvent<Value>]) -> [GraphEvent<Value>] {
        swap(&mailbox, &spare)
        return spare
    }
}

/// A closure observer's closure, in a box: the sink hands the box (a reference) out of its
/// critical section, and calls the closure through it. Handing the closure itself out of the
/// generic state would re-wrap it, one allocation per call, in specialized code.
///
/// A values-only observer's closure is kept as written and the box picks the value out of the
/// event: wrapping it in an event closure would add two calls to every delivery. (Two plain
/// closures and a flag, not an enum: a call through an enum payload copies the closure, two
/// reference counts per call.)
@usableFromInline
final class _Handler<Value: Sendable> {
    @usableFromInline enum Body {
        case events(_EventSink<Value>.Handler)
        case values((Value) -> Void)
    }

    @usableFromInline let events: _EventSink<Value>.Handler
    @usableFromInline let values: (Value) -> Void
    @usableFromInline let valuesOnly: Bool

    @inlinable init(_ body: Body) {
        switch body {
        case .events(let handler):
            events = handler
            values = { _ in }
            valuesOnly = false
        case .values(let handler):
            events = { _ in }
            values = handler
            valuesOnly = true
        }
    }

    /// An events closure, not through `Body`: a closure taken out of an enum's payload is called
    /// through two reabstraction thunks.
    @inlinable init(events handler: @escaping _EventSink<Value>.Handler) {
        events = handler
        values = { _ in }
        valuesOnly = false
    }

    /// Calls the closure with `event` (a values-only closure with its value, if it has one).
    @inlinable
    func call(_ event: GraphEvent<Value>) {
        if valuesOnly {
            if case .value(let value) = event { values(value) }
        } else {
            events(event)
        }
    }

    /// `call(_:)` for a value event, given its value.
    ///
    /// Why: the kit's closures take their argument indirectly (they are generic), and a value
    /// picked out of an event and handed to one in the same function is copied first: two
    /// reference counts per closure and call for an `ArrayChange`. A broadcast picks the value
    /// out once and passes it to the function that calls its closures (`_deliverValue`), which
    /// hands it to each as it is.
    @inlinable
    func call(_ event: GraphEvent<Value>, value: Value) {
        if valuesOnly { values(value) } else { events(event) }
    }
}

/// What a coalescing observation's sink reports when it leaves the observer list (see
/// `_EventSink._endsOnRemoval`); never delivered to a closure.
@usableFromInline
struct _LeftTheObserverList: Error {
    @usableFromInline init() {}
}
