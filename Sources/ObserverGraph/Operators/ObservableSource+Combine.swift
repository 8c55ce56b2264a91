/// Operators with several inputs.
///
/// Thread safety: safe from any thread. Callbacks: none of their own; the events propagate as
/// for every operator (see `ObservableSource+Transform.swift`).
extension ObservableSource {
    /// The latest values of this source and `other` together, each time either changes, once
    /// both have a value (Combine's and RxSwift's `combineLatest`).
    ///
    /// **Glitch-free.** When one change reaches both inputs (a diamond: both derive from one
    /// source), the result computes once, after both inputs have changed: never one new input
    /// with one old. It finishes when both inputs have finished, and fails when either fails.
    ///
    /// **Built while its inputs propagate.** The result starts between two passes of the graph
    /// joining its inputs, so its first value, too, has both inputs either before or after one
    /// change. Built while that graph is idle (the usual case), it has its value before this
    /// method returns. Built while a pass runs (inside an observer or an operator closure of the
    /// graph, or on another thread), it starts once that pass ends: until then `value` is `nil`
    /// and a new observer receives nothing first; its observers then receive the current value.
    /// No thread waits: the thread running the passes starts it, and a builder that finds the
    /// graph idle runs the passes queued meanwhile, as a set does.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) per input event; at most one result per propagation pass.
    @inlinable
    public func combineLatest<Other: ObservableSource>(
        _ other: Other
    ) -> DerivedValue<(Value, Other.Value)> {
        let (first, second) = (_operatorNodeForNewEdge(), other._operatorNodeForNewEdge())
        let state = _OperatorCell(_Latest2<Value, Other.Value>())
        return DerivedValue(
            joining: "combineLatest", upstreams: [self, other], inputs: [first, second],
            replays: first.replays && second.replays
        ) { node, pass in
            first.attach(node, in: pass) { node, event, pass in
                state.value.a.take(event)
                _combine(node, pass, state)
            }
            second.attach(node, in: pass) { node, event, pass in
                state.value.b.take(event)
                _combine(node, pass, state)
            }
        }
    }

    /// The latest values of this source, `second` and `third` together, each time any changes,
    /// once all have a value. Glitch-free, terminating and started (when built while its inputs
    /// propagate) as `combineLatest(_:)`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) per input event; at most one result per propagation pass.
    @inlinable
    public func combineLatest<Second: ObservableSource, Third: ObservableSource>(
        _ second: Second, _ third: Third
    ) -> DerivedValue<(Value, Second.Value, Third.Value)> {
        let nodes = (
            _operatorNodeForNewEdge(), second._operatorNodeForNewEdge(), third._operatorNodeForNewEdge()
        )
        let state = _OperatorCell(_Latest3<Value, Second.Value, Third.Value>())
        return DerivedValue(
            joining: "combineLatest", upstreams: [self, second, third],
            inputs: [nodes.0, nodes.1, nodes.2],
            replays: nodes.0.replays && nodes.1.replays && nodes.2.replays
        ) { node, pass in
            nodes.0.attach(node, in: pass) { node, event, pass in
                state.value.a.take(event)
                _combine(node, pass, state)
            }
            nodes.1.attach(node, in: pass) { node, event, pass in
                state.value.b.take(event)
                _combine(node, pass, state)
            }
            nodes.2.attach(node, in: pass) { node, event, pass in
                state.value.c.take(event)
                _combine(node, pass, state)
            }
        }
    }

    /// The values of this source and of `others`, interleaved as they arrive (Combine's and
    /// RxSwift's `merge`). When one change reaches several inputs (they derive from one source),
    /// the result passes on each input's events once every input has them, in the order of the
    /// inputs' ranks (an input closer to the source first), inputs of equal rank in the order
    /// they are listed; so its `value` after the change is the last of them, however the graph
    /// was built. It finishes when every input has finished, and fails when any fails. When
    /// every input has a current value (values, not event channels), so does the result: it
    /// starts with the last of them, and replays it to each new observer; built while its
    /// inputs propagate, it starts as `combineLatest(_:)` does, after the running pass, with
    /// each input's current value, in that order. With an event channel among the inputs, it
    /// is a stream of events, as the channel is: a new observer gets nothing until the next
    /// event (`value.merge(channel)` does not replay `value`'s current value; to have it, make
    /// the channel a value first: `value.merge(channel.prepend(value.value))`).
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) per input event, plus O(k) per propagation pass that reaches it, for
    ///   k inputs.
    public func merge<Other: ObservableSource>(_ others: Other...) -> DerivedValue<Value>
    where Other.Value == Value {
        let parents = [_operatorNodeForNewEdge()] + others.map { $0._operatorNodeForNewEdge() }
        // The order a pass hands on the inputs' events: by rank, then as listed.
        let order = parents.indices.sorted { (parents[$0].rank, $0) < (parents[$1].rank, $1) }
        let state = _OperatorCell(_MergeState<Value>(inputs: parents.count))
        return DerivedValue(
            joining: "merge", upstreams: [self] + others, inputs: parents,
            replays: parents.allSatisfy(\.replays)
        ) { node, pass in
            for input in order {
                parents[input].attach(node, in: pass) { node, event, pass in
                    guard let pass else {
                        if state.value.passesOn(event) { node.emit(event, nil) }
                        return
                    }
                    state.value.pending[input].append(event)
                    // Made once per node, by the thread running passes (the only one that marks it).
                    if node.markedWork == nil {
                        node.markedWork = { node, pass in
                            for input in order {
                                guard !state.value.pending[input].isEmpty else { continue }
                                let events = state.value.pending[input]
                                state.value.pending[input] = []
                                // Emitted outside any access to the state: what runs below
                                // may reach this node again (a switch in the pass).
                                for event in events where state.value.passesOn(event) {
                                    node.emit(event, pass)
                                }
                            }
                        }
                    }
                    pass.mark(node)
                }
            }
        }
    }
}

/// What a `merge` node keeps: the events each input sent in the running pass, handed on when
/// the node runs (see `merge(_:)`), and how many inputs have not finished.
@usableFromInline
struct _MergeState<Value: Sendable> {
    @usableFromInline var pending: [[GraphEvent<Value>]]
    @usableFromInline var open: Int

    @usableFromInline init(inputs: Int) {
        pending = Array(repeating: [], count: inputs)
        open = inputs
    }

    /// Whether `event` is passed on: a `.finished` only from the last input to finish.
    @usableFromInline
    mutating func passesOn(_ event: GraphEvent<Value>) -> Bool {
        guard case .finished = event else { return true }
        open -= 1
        return open == 0
    }
}

/// One input of a `combineLatest`: its latest value and whether it finished.
@usableFromInline
struct _LatestInput<Value> {
    @usableFromInline var value: Value?
    @usableFromInline var finished = false
    @usableFromInline var failure: (any Error)?
    /// A value arrived since the node last ran.
    @usableFromInline var fresh = false

    @inlinable init() {}

    @inlinable
    mutating func take(_ event: GraphEvent<Value>) {
        switch event {
        case .value(let value):
            self.value = value
            fresh = true
        case .finished: finished = true
        case .failed(let error): failure = failure ?? error
        }
    }
}

/// What a `combineLatest` node looks at when it runs.
@usableFromInline
protocol _CombineState {
    associatedtype Output
    var output: Output? { get }
    var failure: (any Error)? { get }
    var allFinished: Bool { get }
    /// Whether an input has a value the node has not combined yet.
    var fresh: Bool { get }
    mutating func markCombined()
}

@usableFromInline
struct _Latest2<A, B>: _CombineState {
    @usableFromInline var a = _LatestInput<A>()
    @usableFromInline var b = _LatestInput<B>()
    @inlinable var fresh: Bool { a.fresh || b.fresh }

    @inlinable init() {}

    @inlinable mutating func markCombined() {
        a.fresh = false
        b.fresh = false
    }

    @inlinable var output: (A, B)? {
        guard let a = a.value, let b = b.value else { return nil }
        return (a, b)
    }
    @inlinable var failure: (any Error)? { a.failure ?? b.failure }
    @inlinable var allFinished: Bool { a.finished && b.finished }
}

@usableFromInline
struct _Latest3<A, B, C>: _CombineState {
    @usableFromInline var a = _LatestInput<A>()
    @usableFromInline var b = _LatestInput<B>()
    @usableFromInline var c = _LatestInput<C>()
    @inlinable var fresh: Bool { a.fresh || b.fresh || c.fresh }

    @inlinable init() {}

    @inlinable mutating func markCombined() {
        a.fresh = false
        b.fresh = false
        c.fresh = false
    }

    @inlinable var output: (A, B, C)? {
        guard let a = a.value, let b = b.value, let c = c.value else { return nil }
        return (a, b, c)
    }
    @inlinable var failure: (any Error)? { a.failure ?? b.failure ?? c.failure }
    @inlinable var allFinished: Bool { a.finished && b.finished && c.finished }
}

/// Runs a `combineLatest` node: at once while it is being built, otherwise once per pass, after
/// every node of lower rank (so it sees every input this pass changes).
@inlinable
func _combine<State: _CombineState>(
    _ node: _OperatorNode<State.Output>, _ pass: _Pass?, _ state: _OperatorCell<State>
) {
    guard let pass else { return _combineNow(node, nil, state) }
    // Made once per node, by the thread running passes (the only one that marks it).
    if node.markedWork == nil {
        node.markedWork = { node, pass in _combineNow(node, pass, state) }
    }
    pass.mark(node)
}

/// Runs a `combineLatest` node: fails, emits the combination of fresh inputs, or finishes. The
/// state is read and updated in place, in one access (no copy of the inputs' latest values).
@inlinable
func _combineNow<State: _CombineState>(
    _ node: _OperatorNode<State.Output>, _ pass: _Pass?, _ state: _OperatorCell<State>
) {
    let (failure, value, finished) = state.value.takeCombination()
    if let failure {
        node.emit(.failed(failure), pass)
        return
    }
    if let value { node.emit(.value(value), pass) }
    if finished { node.emit(.finished, pass) }
}

extension _CombineState {
    /// What the node emits now: the first failure, else the combination of fresh inputs (marked
    /// combined) and whether every input finished.
    @inlinable
    mutating func takeCombination() -> (failure: (any Error)?, value: Output?, finished: Bool) {
        if let failure { return (failure, nil, false) }
        var value: Output?
        if fresh, let combined = output {
            markCombined()
            value = combined
        }
        return (nil, value, allFinished)
    }
}
