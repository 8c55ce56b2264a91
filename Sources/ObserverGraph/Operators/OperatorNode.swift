import Dispatch

/// One node of the operator graph: a source's input (rank 0) or the core of a `DerivedValue`.
///
/// Plumbing for operators: provided by the kit, with no public members. A node keeps the latest
/// value it emitted (when it replays one), its terminal event, and the edges to the nodes derived
/// from it. A child holds its parents strongly, and a parent's edges hold the child's node
/// strongly (so calling it costs no weak load), until the derived value that owns the child goes:
/// its deinit removes the child's edges (`detachAll`), which breaks the cycle. A source owns its
/// input node (see `input(of:makeHandler:)`), which holds nothing of the source but a weak
/// reference used to retire it.
///
/// Thread safety: `Sendable`. Emissions happen only inside a propagation pass (one at a time per
/// connected component, see `_PropagationDomain`) or while the node is being built (before
/// anyone else can see it).
public final class _OperatorNode<Value: Sendable>: @unchecked Sendable {
    /// 0 for a source's input; 1 + the highest rank of the parents otherwise.
    @usableFromInline let rank: Int
    /// Whether a new child starts from the latest value (value sources and what derives from them).
    @usableFromInline let replays: Bool
    @usableFromInline let links: GraphLock<_NodeLinks<Value>>
    /// The component this node belongs to (it may have been merged into another since).
    @usableFromInline let domain: _PropagationDomain
    /// The domain's reusable pass (and fast path gate), kept here so that a source's change
    /// reaches it with one reference, and unretained: `domain` keeps it (see
    /// `_PropagationDomain.submit`).
    @usableFromInline let pass: Unmanaged<_Pass>
    /// A source's input only: takes it out of its source once it lost its last edge (see
    /// `disconnect`). Set before the node is published, never changed.
    private(set) var retire: (@Sendable () -> Void)?
    /// The event source of the derived value whose core this is (`nil` for a source's input): it
    /// delivers what the node emits to the value's observers (see `publish`). Retained here
    /// until the node's deinit and never changed, so that a publish reaches it with no weak load
    /// and no reference counted: the source has a side table (its observations hold it weakly),
    /// where each count costs far more than an inline one. Publishing stops when the derived
    /// value goes (`released`).
    @usableFromInline let publisher: Unmanaged<_DerivedSource<Value>>?
    /// Makes the parents' edges to this node direct once it is built (used by its builder only).
    @usableFromInline var whenBuilt: [@Sendable () -> Void] = []
    /// Marked in the running pass (see `_Pass.mark`); touched only by the thread running passes.
    @exclusivity(unchecked) @usableFromInline var isMarked = false
    /// What a pass runs for this node once it is marked (a `combineLatest`'s combination), made
    /// once, when the node is first marked, instead of a closure per pass; it captures the
    /// operator's state, not the node. Touched only by the thread running passes, like `isMarked`.
    @exclusivity(unchecked) @usableFromInline var markedWork: ((_OperatorNode<Value>, _Pass) -> Void)?

    @usableFromInline
    init(
        rank: Int, domain: _PropagationDomain, replays: Bool, latest: Value?, terminal: GraphEvent<Value>?,
        building: Bool, publisher: _DerivedSource<Value>?
    ) {
        self.rank = rank
        self.publisher = publisher.map { Unmanaged.passRetained($0) }
        self.domain = domain
        self.pass = .passUnretained(domain.reusablePass)
        self.replays = replays
        links = GraphLock(_NodeLinks(latest: latest, terminal: terminal, building: building))
    }

    deinit {
        let (undo, edges) = links.withLock { ($0.detach, $0.edges.all) }
        for undo in undo { undo() }
        // No pass is emitting from this node (it would hold it): what the edges run goes now.
        for edge in edges { edge.target.release() }
        publisher?.release()
    }

    /// Runs `markedWork` (see `_Pass.mark`).
    @usableFromInline
    func runMarked(_ pass: _Pass) {
        markedWork?(self, pass)
    }

    /// Removes this node's edges from its parents (their closures are released with no lock
    /// held). Called once, by the deinit of the derived value that owns this node; the node may
    /// still finish an event a pass is running on another thread, and then delivers nothing.
    /// What is added to remove later (`onDetach`) then runs at once.
    func detachAll() {
        let undo = links.withLock { links -> [@Sendable () -> Void] in
            links.released = true
            defer { links.detach = [] }
            return links.detach
        }
        for remove in undo { remove() }
    }

    /// Adds `undo` to what removes this node's edges (see `detachAll`); runs it at once when the
    /// owning derived value is gone already (a join built by a queued job, see `DerivedValue`).
    @usableFromInline
    func onDetach(_ undo: @escaping @Sendable () -> Void) {
        let released = links.withLock { links -> Bool in
            if !links.released { links.detach.append(undo) }
            return links.released
        }
        if released { undo() }
    }

    /// Adds an edge to a child and returns what the child starts from, in one critical section:
    /// the child then receives exactly the emissions that follow.
    /// `direct`: the child is built (see `_Edge.direct`); `epoch`: the component's (see `_Edge`).
    @usableFromInline func connect(
        direct: Bool, epoch: UInt64, _ edge: @escaping @Sendable (GraphEvent<Value>, _Pass?, Bool) -> Void
    ) -> (id: UInt64, latest: Value?, terminal: GraphEvent<Value>?) {
        links.withLock { links in
            if links.promised > 0 { links.promised -= 1 }  // a source's input: the edge promised
            links.nextEdge &+= 1
            links.edges.append(_Edge(id: links.nextEdge, call: edge, direct: direct, epoch: epoch))
            return (links.nextEdge, links.latest, links.terminal)
        }
    }

    /// Marks the edge `id` direct: its child finished building.
    @usableFromInline func makeDirect(_ id: UInt64) {
        links.withLock { links in
            links.edges.makeDirect(id)
        }
    }

    /// Removes the edge `id`. A source's input left with no edge, and none promised, is retired
    /// in the same critical section: its source drops it, and makes a new one for the next
    /// operator.
    @usableFromInline func disconnect(_ id: UInt64) {
        let (removed, retiring) = links.withLock { links -> (_Edge<Value>?, Bool) in
            let removed = links.edges.remove(id)
            guard removed != nil, retire != nil else { return (removed, false) }
            return (removed, links.retireIfIdle())
        }
        // A pass running now may have read the edge: what it runs (the operator closure) goes
        // once no pass runs, with no lock held.
        if let removed { domain.releaseAfterPasses(removed.target.takeRetainedValue()) }
        if retiring { retire?() }
    }

    /// Takes back an edge promised by `input(of:makeHandler:)` that will not be made (a join
    /// released before its inputs were connected); retires an input left idle, as `disconnect`.
    @usableFromInline func withdrawPromise() {
        let retiring = links.withLock { links -> Bool in
            guard links.promised > 0 else { return false }
            links.promised -= 1
            return links.retireIfIdle()
        }
        if retiring { retire?() }
    }

    /// A source's input not retired: one more edge is promised to the caller, who connects it.
    /// Called under the source's lock (see `input(of:makeHandler:)`).
    private func promiseEdge() -> _OperatorNode? {
        links.withLock { links in
            guard !links.retired else { return nil }
            links.promised += 1
            return self
        }
    }

    /// Emits `event` to the children (and, after the pass, to the derived value's observers).
    /// Nothing after a terminal event. `pass` is `nil` while the node is being built.
    ///
    /// Inlinable, like the rest of the propagation path, so that a chain built in a client is
    /// specialized there for its value types: unspecialized generic code spends most of a set
    /// looking up type metadata.
    @inlinable
    func emit(_ event: GraphEvent<Value>, _ pass: _Pass?) {
        // The value this one replaces is moved out and released after unlocking: it may be the
        // last reference to a user's object, whose `deinit` may read this node.
        let (edge, more, firstInOutbox, replaced) = links.withLock {
            links -> (_Edge<Value>?, [_Edge<Value>]?, Bool, Value?) in
            guard links.terminal == nil else { return (nil, nil, false, nil) }
            var replaced: Value?
            switch event {
            case .value(let value):
                if replays {
                    replaced = links.latest.take()
                    links.latest = value
                }
            case .finished, .failed: links.terminal = event
            }
            var first = false
            // Only for an observed derived value that still lives (`publish` checks again).
            if pass != nil, links.observed, !links.released {
                first = links.outbox.isEmpty
                links.outbox.append(event)
            }
            // No array to copy (or count references of) for the usual single edge.
            return (links.edges.first, links.edges.more.isEmpty ? nil : links.edges.more, first, replaced)
        }
        _ = consume replaced
        if firstInOutbox, let pass {
            // A closure capturing nothing (the node travels beside it): no allocation per pass.
            pass.touched.append(
                _Publication(self) { unsafeDowncast($0, to: _OperatorNode<Value>.self).publish() })
        }
        guard let edge else { return }
        send(event, along: edge, pass)
        guard let more else { return }
        for edge in more { send(event, along: edge, pass) }
    }

    /// Sends `event` along one edge (see `emit`).
    @inlinable
    func send(_ event: GraphEvent<Value>, along edge: _Edge<Value>, _ pass: _Pass?) {
        if let pass, edge.epoch > pass.epoch {
            // Made by a merge since this pass began: the child may be run by another pass now,
            // so `accept` queues the event for a pass of its own (or hands it to the child's
            // builder, who owns the child until it is built).
            pass.crossing = domain
            edge.target._withUnsafeGuaranteedRef { $0.call(event, pass, false) }
            pass.crossing = nil
        } else {
            edge.target._withUnsafeGuaranteedRef { $0.call(event, pass, edge.direct) }
        }
    }

    /// Connects `child` to this node: `handle` runs for each event this node emits from now on,
    /// and first for what the child starts from (the latest value, the terminal event), in
    /// `pass` when connecting during one. The edge holds the child strongly. With
    /// `removedAtDeinit` the child removes it when its derived value goes; otherwise the caller
    /// removes it (`disconnect`).
    @inlinable @discardableResult
    func attach<Child: Sendable>(
        _ child: _OperatorNode<Child>, in pass: _Pass? = nil, removedAtDeinit: Bool = true,
        _ handle: @escaping @Sendable (_OperatorNode<Child>, GraphEvent<Value>, _Pass?) -> Void
    ) -> UInt64 {
        // A built child stays built; one still being built makes the edge direct when it is done.
        let built = child.links.withLock { !$0.building }
        let epoch = child.domain.currentEpoch()
        // Connecting in a pass (a join, a switch to this node): work its builder left to the
        // component runs first, so that the child starts from the value it reaches. Not in a
        // pass that began before a merge (another thread may run this node's passes).
        if let pass, pass.epoch >= epoch, links.withLock({ $0.handingOff }) { runHandedOff(pass) }
        let (id, latest, terminal) = connect(direct: built, epoch: epoch) { event, pass, direct in
            if direct { handle(child, event, pass) } else { child.accept(event, pass, handle) }
        }
        if !built { child.whenBuilt.append { [self] in self.makeDirect(id) } }
        if removedAtDeinit { child.onDetach { [self] in self.disconnect(id) } }
        if let latest { handle(child, .value(latest), pass) }
        if let terminal { handle(child, terminal, pass) }
        return id
    }

    /// Runs `handle` now, or, while this node is still being built on another thread, hands it
    /// to the builder (which runs it before publishing the node). Once the builder has left
    /// work to the passes (`_NodeLinks.handingOff`), the event joins that work, and this pass
    /// runs it all (`runHandedOff`). An event crossing an edge a merge made since its pass began
    /// (`_Pass.crossing`) is queued for a pass of its own.
    @inlinable
    func accept<Input: Sendable>(
        _ event: GraphEvent<Input>, _ pass: _Pass?,
        _ handle: @escaping @Sendable (_OperatorNode<Value>, GraphEvent<Input>, _Pass?) -> Void
    ) {
        // Whether the event was buffered, and whether for this pass to run (handed off). An
        // event crossing a merge while work is left waits for its own pass, as any other.
        let crossing = pass?.crossing
        let (deferred, handedOff) = links.withLock { links -> (Bool, Bool) in
            guard links.building || (links.handingOff && crossing == nil) else { return (false, false) }
            links.buffered.append { [unowned self] pass in handle(self, event, pass) }
            return (true, !links.building)
        }
        if deferred {
            // With no pass (never, once the node is published), the job `finishBuilding`
            // queued runs it.
            if handedOff, let pass { runHandedOff(pass) }
            return
        }
        if let pass, let domain = crossing, links.withLock({ $0.handingOff }) {
            pass.queueAcrossMerge(domain) { [self] pass in accept(event, pass, handle) }
            return
        }
        if let pass, let domain = pass.crossing {
            pass.queueAcrossMerge(domain) { pass in handle(self, event, pass) }
        } else {
            handle(self, event, pass)
        }
    }

    /// Runs the work a builder left to the passes (see `finishBuilding`), and what arrived
    /// behind it, in order, in `pass`, until none is left; then makes the parents' edges direct.
    /// It runs in a pass of the node's component, so no other thread adds to it meanwhile, and
    /// it ends. Does nothing once that work has run.
    @usableFromInline
    func runHandedOff(_ pass: _Pass) {
        while true {
            let (work, flips) = links.withLock {
                links -> ([@Sendable (_Pass?) -> Void], [@Sendable () -> Void]) in
                guard links.buffered.isEmpty else {
                    defer { links.buffered = [] }
                    return (links.buffered, [])
                }
                guard links.handingOff else { return ([], []) }
                links.handingOff = false
                defer { links.flipsAfterHandOff = [] }
                return ([], links.flipsAfterHandOff)
            }
            if work.isEmpty {
                for flip in flips { flip() }
                return
            }
            for item in work { item(pass) }
        }
    }

    /// Ends the build: runs the work that arrived meanwhile, then, in one critical section, marks
    /// the node built (its event source takes the state reached when first observed, see
    /// `DerivedValue.publishing()`).
    ///
    /// The builder runs one batch of that work: a thread that changes an input without pause
    /// could otherwise buffer work faster than the builder runs it, and the build would never
    /// end. What arrives during that batch is left to the component (`_NodeLinks.handingOff`):
    /// a job queued ahead of every pass to come runs it, or the running pass does if it reaches
    /// the node first (`accept`), before the parents' edges become direct. The job is queued
    /// without running it (`enqueueFirst`), so this thread does not become the component's
    /// runner: the thread running the component's passes runs it next, or, with none, the next
    /// thread that submits to the component; should the job not have run within 5 ms (the
    /// changes stopped), an empty job submitted from a global queue runs it. No
    /// event is lost or reordered, no pass reads the node's value before that work ran, and
    /// the build ends after one batch.
    func finishBuilding() {
        var ranBatch = false
        while true {
            let flips = whenBuilt
            let (work, built, handedOff) = links.withLock {
                links -> ([@Sendable (_Pass?) -> Void], Bool, Bool) in
                if !links.buffered.isEmpty, !ranBatch {
                    defer { links.buffered = [] }
                    return (links.buffered, false, false)
                }
                links.building = false
                guard !links.buffered.isEmpty else { return ([], true, false) }
                links.handingOff = true
                links.flipsAfterHandOff = flips
                return ([], true, true)
            }
            guard built else {
                for item in work { item(nil) }
                ranBatch = true
                continue
            }
            whenBuilt = []
            if handedOff {
                // Ahead of every pass to come, so that none reads this node's value before the
                // work left catches it up (a join over it, another input of a join under it).
                let pending = GraphLock(true)  // the job below has not run
                domain.enqueueFirst { [self] pass in
                    pending.withLock { $0 = false }
                    runHandedOff(pass)
                }
                // Should nothing be submitted to the component (the changes stopped), an empty
                // job runs the queue. Later, so that a thread still setting runs it in its next
                // pass (the thread that submits to an idle component runs what was queued
                // meanwhile, until it catches up). Whether the job ran, not whether the work
                // did: a pass may run the work first, and the job, queued after that pass
                // ended, must still run (it holds this node and keeps the fast path closed).
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { [domain] in
                    guard pending.withLock({ $0 }) else { return }
                    domain.submit { _ in }
                }
            } else {
                for flip in flips { flip() }
            }
            return
        }
    }

    /// The input node of `source`, shared by every operator on it, so that one change of the
    /// source starts one propagation pass (what makes diamonds glitch-free).
    ///
    /// The source owns its input: its state holds the node and the observation feeding it,
    /// whose handler holds the node strongly (a change reaches it with no weak load). Each call
    /// promises one edge, which the caller connects (`attach`) or withdraws (`withdrawPromise`).
    /// Once the input has no edge and none promised, it is retired (`disconnect`): its source
    /// drops it with its observation, and the next call makes a new one (the retired node, with
    /// no edge and fed nothing, is released when the source's next delivery drops the closed
    /// observation that holds it, or with the source). A finished source's
    /// input only carries the terminal event, and is not kept.
    ///
    /// `makeHandler` makes what starts the pass for each change of the source (the caller's, so
    /// that it is specialized where the chain is built).
    @usableFromInline
    static func input(
        of source: GraphEventSource<Value>,
        makeHandler: (_OperatorNode<Value>) -> @Sendable (GraphEvent<Value>) -> Void
    ) -> _OperatorNode<Value> {
        if let existing = source.pipeline.withLock({ $0.operatorInput?.node.promiseEdge() }) {
            return existing
        }
        let replays = source.pipeline.withLock { $0.current != nil }  // fixed for a source's life
        let node = _OperatorNode(
            rank: 0, domain: _PropagationDomain(), replays: replays, latest: nil, terminal: nil,
            building: false, publisher: nil)
        let handler = makeHandler(node)
        // Compares identities: the closure holds nothing of the node, and the source weakly.
        let identity = ObjectIdentifier(node)
        node.retire = { [weak source] in
            guard let source else { return }
            let taken = source.pipeline.withLock { state -> _OperatorInputLink<Value>? in
                guard let input = state.operatorInput, ObjectIdentifier(input.node) == identity else {
                    return nil
                }
                state.operatorInput = nil
                return input
            }
            taken?.token.cancel()  // then released, with no lock held
        }
        // Join the source and read its current value in one critical section of the source: the
        // input then receives exactly the changes that follow. Another thread may have made an
        // input meanwhile: the first one made is shared.
        let (winner, replaced, chores) = source.pipeline.withLock {
            state -> (_OperatorNode<Value>, _OperatorInputLink<Value>?, (Bool, Bool)) in
            if let existing = state.operatorInput?.node.promiseEdge() {
                return (existing, nil, (false, false))
            }
            node.links.withLock { links in
                links.latest = state.current.map { source._replayValue($0) }
                links.terminal = state.terminal
                links.promised = 1
            }
            guard state.terminal == nil else { return (node, nil, (false, false)) }
            let sink = _EventSink<Value>(
                firstSequence: state.takeSequence(), mode: .nonisolated, handler: .events(handler),
                source: source,
                direct: true)
            let joined = source._subscribeDeferringSweep(sink)
            // A retired input its retirement has not taken out yet: taken out here.
            let replaced = state.operatorInput
            state.operatorInput = _OperatorInputLink(node: node, token: SubscriptionToken(sink))
            return (node, replaced, (joined.sweepDue, joined.releaseDue))
        }
        if chores.1 { source.graphNode._releaseDroppedActors() }
        if chores.0 { source.graphNode._sweepDeadObservers() }
        replaced?.token.cancel()
        return winner
    }
}

/// A source's input node and the observation that feeds it, held by the source (see
/// `_OperatorNode.input(of:makeHandler:)`).
@usableFromInline
struct _OperatorInputLink<Value: Sendable> {
    let node: _OperatorNode<Value>
    let token: SubscriptionToken
}
