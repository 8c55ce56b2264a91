import Dispatch

/// A source that operators can start from: `ObservableValue`, `EventChannel`, `ObservableArray`
/// and `DerivedValue`. Every operator (`map`, `filter`, `combineLatest`, …) is defined once on
/// it and returns a `DerivedValue`, so chains compose.
///
/// Thread safety: conforming types are `Sendable`; operators may be applied from any thread.
public protocol ObservableSource<Value>: GraphObservable, Sendable {
    /// What the source delivers.
    associatedtype Value: Sendable

    /// Plumbing: the node a new operator edge attaches to. Each call promises that edge: the
    /// operator that calls it connects it once. Provided by the kit; do not implement or call it.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: expected O(1).
    func _operatorNodeForNewEdge() -> _OperatorNode<Value>
}

extension GraphEventSource: ObservableSource {
    /// Plumbing: this source's input node, shared by every operator on it (one per source at a
    /// time), with one more edge promised to the caller (see `_OperatorNode.input(of:makeHandler:)`).
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: expected O(1).
    @inlinable
    public func _operatorNodeForNewEdge() -> _OperatorNode<Value> {
        .input(of: self) { node in
            { event in _PropagationDomain.submit(node, event) }
        }
    }
}

/// A read-only value computed by an operator (`map`, `filter`, `combineLatest`, …) from other
/// sources: it has no setter and cannot be finished from outside; it changes, finishes and fails
/// only as its inputs do.
///
///     let credits = ObservableValue(0)
///     let label = credits.map { "\($0) credits" }
///     let token = label.observeValuesNonisolated { print($0) }   // prints "0 credits"
///     credits.value = 10                                           // prints "10 credits"
///
/// **Ownership.** A derived value keeps its inputs alive; its inputs hold it weakly. Observation
/// tokens keep it alive, so `credits.map(f).observe { … }` works with only the token kept; the
/// whole chain is released when the last token and reference go.
///
/// **Replay.** Derived from value sources only, it has a `value` and a new observer receives it
/// first (like an `ObservableValue`); derived from an `EventChannel`, it replays nothing.
///
/// **Glitch-free.** One change of a source reaches each derived value once, in rank order, with
/// consistent inputs (see the README section "Operators"). Operator closures are `@Sendable` and
/// run on the thread that propagates the change (usually the sender's).
///
/// Thread safety: `Sendable`; every member is safe from any thread.
public final class DerivedValue<Value: Sendable>:
    ObservableSource, GraphTrackingObserver, @unchecked Sendable
{
    @usableFromInline let core: _OperatorNode<Value>
    @usableFromInline let source: _DerivedSource<Value>
    /// The sources this value derives from, kept alive (and drawn as its subscriptions).
    let upstreams: [any GraphObservable]
    /// The operator's name, like `map`: how the node shows in `GraphSnapshot` exports.
    ///
    /// Thread safety: immutable. Callbacks: none.
    /// - Complexity: O(1).
    public let graphDisplayName: String

    /// Builds a node of rank 1 + the highest input rank, in the component joining its inputs'
    /// (see `_PropagationDomain`): `connect` attaches it to its inputs and computes what it
    /// starts from; work arriving meanwhile is run before it is published, and what arrives
    /// while that runs is left to the component's passes (see `_OperatorNode.finishBuilding`).
    @usableFromInline
    init(
        _ name: String, upstreams: [any GraphObservable], inputs: [any _OperatorInput], replays: Bool,
        connect: (_OperatorNode<Value>) -> Void
    ) {
        let source = _DerivedSource<Value>(current: nil, terminal: nil, replays: replays)
        let core = _OperatorNode<Value>(
            rank: 1 + (inputs.lazy.map(\.rank).max() ?? 0),
            domain: _PropagationDomain.joining(inputs.map(\.domain)), replays: replays, latest: nil,
            terminal: nil, building: true, publisher: source)
        connect(core)
        core.finishBuilding()
        self.core = core
        self.source = source
        self.upstreams = upstreams
        self.graphDisplayName = name
        for upstream in upstreams { upstream.addObserver(self, isolation: nil) }
    }

    /// Builds a node with several inputs (`combineLatest`, `merge`) at a boundary between the
    /// propagation passes of the component joining its inputs, so that it starts from inputs
    /// that one change has either reached all of or none of. `connect` attaches it to its inputs
    /// inside a pass of its own, queued in that component: when no pass of it is running, it runs
    /// on this thread before the initializer returns (the usual case); otherwise the thread
    /// running the passes runs it next, and until then this value has no value (`value` is
    /// `nil`) and a new observer receives nothing first. No thread waits for another.
    @usableFromInline
    init(
        joining name: String, upstreams: [any GraphObservable], inputs: [any _OperatorInput],
        replays: Bool, connect: @escaping @Sendable (_OperatorNode<Value>, _Pass) -> Void
    ) {
        let source = _DerivedSource<Value>(current: nil, terminal: nil, replays: replays)
        let core = _OperatorNode<Value>(
            rank: 1 + (inputs.lazy.map(\.rank).max() ?? 0),
            domain: _PropagationDomain.joining(inputs.map(\.domain)), replays: replays, latest: nil,
            terminal: nil, building: false, publisher: source)
        self.core = core
        self.source = source
        self.upstreams = upstreams
        self.graphDisplayName = name
        for upstream in upstreams { upstream.addObserver(self, isolation: nil) }
        core.domain.submit { pass in
            // Released before its turn: no edge is made (and none is left behind if released
            // while they are made: `onDetach` then removes each at once); the edges promised by
            // sources' inputs are withdrawn.
            guard !core.links.withLock({ $0.released }) else {
                for input in inputs { input.withdrawPromise() }
                return
            }
            connect(core, pass)
        }
    }

    /// Removes the node's edges from its inputs, which hold it strongly while this value lives.
    deinit {
        core.detachAll()
    }

    /// The node that holds this value's observers; also its node as a tracking observer (it is
    /// subscribed to its inputs, which is how snapshots draw the chain).
    ///
    /// Thread safety: immutable. Callbacks: none.
    /// - Complexity: O(1).
    public var graphNode: GraphNode { source.graphNode }

    /// Plumbing: this value's operator node. Provided by the kit.
    ///
    /// Thread safety: immutable. Callbacks: none.
    /// - Complexity: O(1).
    public func _operatorNodeForNewEdge() -> _OperatorNode<Value> { core }

    /// The latest value, when this value replays one (it derives from value sources only) and
    /// one has passed (a `filter` may not have let one through yet); `nil` otherwise. It changes
    /// as the propagation pass reaches this value, before the pass delivers to observers. A join
    /// (`combineLatest`, `merge`) built while a pass of its inputs' graph runs starts when that
    /// pass ends: `nil` until then (see `combineLatest(_:)`).
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var value: Value? {
        core.links.withLock { $0.latest }
    }

    /// The terminal event, once an input's termination ended this value.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var terminalEvent: GraphEvent<Value>? {
        core.links.withLock { $0.terminal }
    }

    /// The event source, publishing from now on: a derived value that nobody observed skips
    /// its source (its observers' queue), so that the inner links of a chain cost only their
    /// operator. On the first observation the source takes the value and the terminal event
    /// reached, in one critical section with the node (the node's lock, then the source's), so
    /// the observer then receives exactly what follows. A replaced value is released unlocked.
    @usableFromInline
    func publishing() -> _DerivedSource<Value> {
        let replaced = core.links.withLock { links -> Value? in
            guard !links.observed else { return nil }
            links.observed = true
            return source.catchUp(latest: links.latest, terminal: links.terminal)
        }
        withExtendedLifetime(replaced) {}
        return source
    }

    @usableFromInline
    func keeping(_ token: SubscriptionToken) -> SubscriptionToken {
        SubscriptionToken(_KeepAliveTarget(token: token, owner: self))
    }
}

extension DerivedValue {
    /// Observes with a closure run on the caller's actor, as `GraphEventSource.observe(isolation:_:)`.
    /// The token also keeps this value (and its chain) alive.
    ///
    /// Isolation: a derived value delivers from its propagation pass, which runs nonisolated. On
    /// the main actor, a pass that runs there (a change made on the main actor, with no pass of
    /// the graph running on another thread) calls the closure at once; otherwise calls reach the
    /// actor through its mailbox, on its next turn.
    /// Thread safety: the token may be cancelled from anywhere.
    /// Callbacks: `handler`, on `isolation` only; the latest value first when it replays.
    /// - Returns: the token that keeps the observation alive. Keep it.
    /// - Complexity: expected O(1).
    @inlinable
    public func observe(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        keeping(publishing()._observe(mode: .actor(isolation), drainer: isolation, handler))
    }

    /// Observes only the values, on the caller's actor (see `observe(isolation:_:)`).
    ///
    /// Thread safety: as `observe(isolation:_:)`. Callbacks: `handler` per value, on `isolation`.
    /// - Returns: the token that keeps the observation (and this value) alive.
    /// - Complexity: expected O(1).
    @inlinable
    public func observeValues(
        isolation: isolated any Actor = #isolation, _ handler: @escaping (Value) -> Void
    ) -> SubscriptionToken {
        keeping(publishing().observeValues(isolation: isolation, handler))
    }

    /// Observes with a `@Sendable` closure run on `queue`, as `GraphEventSource.observe(on:_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler`, on `queue`.
    /// - Returns: the token that keeps the observation (and this value) alive.
    /// - Complexity: expected O(1); each delivery is one `queue.async`.
    @inlinable
    public func observe(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        keeping(publishing().observe(on: queue, handler))
    }

    /// Observes only the values with a `@Sendable` closure run on `queue`.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler` per value, on `queue`.
    /// - Returns: the token that keeps the observation (and this value) alive.
    /// - Complexity: as `observe(on:_:)`.
    @inlinable
    public func observeValues(
        on queue: DispatchQueue, _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        keeping(publishing().observeValues(on: queue, handler))
    }

    /// Observes with a `@Sendable` closure called on the thread that propagates each change
    /// (usually the sender's, before the send returns).
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler`, on the propagating thread.
    /// - Returns: the token that keeps the observation (and this value) alive.
    /// - Complexity: expected O(1).
    @inlinable
    public func observeNonisolated(
        _ handler: @escaping @Sendable (GraphEvent<Value>) -> Void
    ) -> SubscriptionToken {
        keeping(publishing().observeNonisolated(handler))
    }

    /// Observes only the values with a `@Sendable` closure called on the propagating thread.
    ///
    /// Thread safety: safe from any thread. Callbacks: `handler` per value.
    /// - Returns: the token that keeps the observation (and this value) alive.
    /// - Complexity: expected O(1).
    @inlinable
    public func observeValuesNonisolated(
        _ handler: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        keeping(publishing().observeValuesNonisolated(handler))
    }

    /// The values as an `AsyncSequence`, as `GraphEventSource.values(bufferingPolicy:)`; the
    /// stream keeps this value alive until it ends.
    ///
    /// Thread safety: safe from any thread. Callbacks: none besides the stream's own.
    /// - Complexity: O(1) to create; each value costs one buffer insertion.
    public func values(
        bufferingPolicy: AsyncThrowingStream<Value, any Error>.Continuation.BufferingPolicy = .unbounded
    ) -> GraphValues<Value> {
        GraphValues(bufferingPolicy: bufferingPolicy) { keeping(publishing()._observeStream($0)) }
    }
}
