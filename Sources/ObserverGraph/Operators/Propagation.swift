/// One connected component of the operator graph, and the queue of its propagation passes.
///
/// Passes of one component run one at a time, in the order their changes arrived; passes of
/// different components run independently (on their senders' threads). A source change that
/// reaches an input node is submitted to the node's component. The thread that finds no pass of
/// the component running runs it at once (after any job left queued with no runner: a builder's
/// left work, see `enqueueFirst`), then what was queued meanwhile, until the queue is empty. Any
/// other submission, from inside a pass (an observer or operator closure setting a
/// source of the same graph) or from another thread, is queued and returns at once: no thread
/// ever waits for another one's pass. No lock is held while a job runs operator closures or
/// delivers to observers. Where the OS has atomics, a pass of an idle component begins and ends
/// with one atomic exchange each (`_DomainGate`); anything else takes the domain's lock.
///
/// **Components merge** when an operator joins them (`combineLatest`, `merge`, a
/// `flatMapLatest` switching to an inner source of another component): a union-find, by size,
/// under one process-wide lock taken only by merges. The merged component takes the queues and
/// the running passes of both. Passes that began before the merge may still run, on two threads
/// at once, each over its own former component: every edge made since carries the merge's epoch,
/// newer than theirs, so such a pass queues what it would send along one, instead of running it,
/// ahead of the jobs queued meanwhile (which arrived after it; see `_OperatorNode.emit`). A thread that finishes a pass while another pass of the component
/// runs leaves the queue to that one, so once they are over, one thread runs the queue again.
///
/// **Removed edges** wait for the passes: what an edge runs is held unretained (see `_Edge`), so
/// an edge removed while passes of the component run is kept here until the last of them ends
/// (`releaseAfterPasses`); the runner releases it, unlocked, as soon as it is the only one and
/// between two passes (a feedback loop or a steady stream of sets keeps no edge longer).
@usableFromInline
final class _PropagationDomain: @unchecked Sendable {
    @usableFromInline let state = GraphLock(_DomainState())
    /// The pass a runner of this component uses when it begins here; touched only by that runner
    /// (a pass begins only at a root with no runner, when no pass of its tree is in use). Where
    /// the OS has atomics, it is a `_DomainGate`, which also holds the fast path's word.
    @usableFromInline let reusablePass: _Pass

    @usableFromInline
    init() {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics {
            reusablePass = _DomainGate()
        } else {
            reusablePass = _Pass()
        }
    }

    /// The fast path's gate: `reusablePass`, which is one where the OS has atomics.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @inlinable
    var gate: _DomainGate { unsafeDowncast(reusablePass, to: _DomainGate.self) }

    /// Under this domain's lock, before the lock path reads or changes `runners` or the queue:
    /// takes the fast path over, counting a fast pass running now (see `_DomainGate`).
    @usableFromInline
    func takeOver(_ state: inout _DomainState) {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics else { return }
        if gate.takeOver() { state.runners += 1 }
    }

    /// Under this domain's lock, when the lock path leaves it a root with no runner and nothing
    /// queued: fast passes may begin again.
    @usableFromInline
    func releaseIfIdle(_ state: _DomainState) {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics,
            state.parent == nil, state.runners == 0, state.head == state.jobs.count
        else { return }
        gate.release()
    }

    /// Under this domain's lock: mirrors a root's new epoch for the fast path.
    func mirrorEpoch(_ epoch: UInt64) {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics else { return }
        gate.epochMirror.store(epoch, ordering: .releasing)
    }

    /// The end of a fast pass whose gate was taken over meanwhile: leaves as a counted runner,
    /// through the lock path (which runs what was queued meanwhile).
    @usableFromInline
    func finishTakenOver(_ pass: _Pass) {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics else { return }
        state.withLock { _ in gate.leaveCounted() }
        runQueued(pass)
    }

    /// Submits `event` of the input `node`: when no pass of its component is running, runs it at
    /// once on this thread (then what was queued meanwhile), with no job allocated; when jobs
    /// are left queued with no runner (see `enqueueFirst`), queues it behind them and runs the
    /// queue on this thread; otherwise queues it as a job and returns.
    @inlinable
    static func submit<Value: Sendable>(_ node: _OperatorNode<Value>, _ event: GraphEvent<Value>) {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *), _usesAtomics {
            // The node reaches its domain's pass (the gate) with no reference to count: the
            // domain it holds keeps it.
            let ran = node.pass._withUnsafeGuaranteedRef { pass -> Bool in
                let gate = unsafeDowncast(pass, to: _DomainGate.self)
                guard gate.tryBegin() else { return false }
                node.emit(event, pass)
                pass.run()
                if !gate.tryEnd() { node.domain.finishTakenOver(pass) }
                return true
            }
            if ran { return }
        } else if node.domain.beginAtRoot() {
            // The usual case, with no reference counting of the domain or the pass beyond this.
            node.pass._withUnsafeGuaranteedRef { pass in
                node.emit(event, pass)
                pass.run()
                node.domain.runQueued(pass)
            }
            return
        }
        let domain = node.domain
        guard let (root, pass) = domain.beginIfIdle() else {
            domain.submit { pass in node.emit(event, pass) }
            return
        }
        node.emit(event, pass)
        pass.run()
        root.runQueued(pass)
    }

    /// `beginIfIdle` for a root: makes this thread the runner when this domain is a root with
    /// no pass running and no job queued. `false` otherwise (merged into another, running, or
    /// with jobs left queued).
    @usableFromInline
    func beginAtRoot() -> Bool {
        state.withLock { state in
            takeOver(&state)
            // Jobs left queued with no runner (see `enqueueFirst`) run before any new pass.
            guard state.parent == nil, state.runners == 0, state.head == state.jobs.count else {
                return false
            }
            state.runners = 1
            reusablePass.epoch = state.epoch
            return true
        }
    }

    /// Makes this thread the runner of the component and returns its root and the pass to run,
    /// when no pass of it is running and no job is queued.
    @usableFromInline
    func beginIfIdle() -> (_PropagationDomain, _Pass)? {
        var domain = self
        while true {
            let (began, parent) = domain.state.withLock { state -> (Bool, _PropagationDomain?) in
                domain.takeOver(&state)
                if let parent = state.parent { return (false, parent) }
                // Jobs left queued with no runner (see `enqueueFirst`) run before any new pass.
                guard state.runners == 0, state.head == state.jobs.count else { return (false, nil) }
                state.runners = 1
                domain.reusablePass.epoch = state.epoch
                return (true, nil)
            }
            if let parent {
                domain = parent
                continue
            }
            return began ? (domain, domain.reusablePass) : nil
        }
    }

    /// Queues `job` in the component; runs the queue on this thread when no pass is running.
    /// `first`: ahead of the queued jobs (what a pass sends across a merge: every job queued
    /// arrived after that pass began, or in the other component before the merge).
    @usableFromInline
    func submit(first: Bool = false, _ job: @escaping @Sendable (_Pass) -> Void) {
        var domain = self
        while true {
            let (began, parent) = domain.state.withLock { state -> (Bool, _PropagationDomain?) in
                domain.takeOver(&state)
                if let parent = state.parent { return (false, parent) }
                if first { state.pushFront(job) } else { state.jobs.append(job) }
                guard state.runners == 0 else { return (false, nil) }
                state.runners = 1
                return (true, nil)
            }
            if let parent {
                domain = parent
                continue
            }
            if began { domain.runQueued(domain.reusablePass) }
            return
        }
    }

    /// Queues `job` ahead of the queued jobs without running it, even when no pass is running:
    /// the component's runner runs it next; with none, the next thread that submits anything
    /// to the component does, before its own work (no pass begins while jobs are queued). The
    /// caller makes sure something is submitted (see `_OperatorNode.finishBuilding`). So this
    /// thread never becomes the component's runner here.
    func enqueueFirst(_ job: @escaping @Sendable (_Pass) -> Void) {
        var domain = self
        while true {
            let parent = domain.state.withLock { state -> _PropagationDomain? in
                domain.takeOver(&state)
                if let parent = state.parent { return parent }
                state.pushFront(job)
                return nil
            }
            guard let parent else { return }
            domain = parent
        }
    }

    /// Runs the component's queued jobs with `pass`, until the queue is empty or another runner
    /// of the component (after a merge) is left to run it. Called by a runner after its pass.
    @usableFromInline
    func runQueued(_ pass: _Pass) {
        // The usual case first: a root, one runner, nothing queued. Edges removed meanwhile are
        // released whenever this thread is the only runner between two passes (none of them is
        // being called then; see `releaseAfterPasses`), with no lock held.
        let (finished, removedEdges) = state.withLock { state -> (Bool, [AnyObject]?) in
            takeOver(&state)
            guard state.parent == nil, state.runners == 1, state.head == state.jobs.count else {
                return (false, nil)
            }
            if !state.jobs.isEmpty {
                state.jobs.removeAll(keepingCapacity: state.jobs.count <= 64)
                state.head = 0
            }
            state.runners = 0
            releaseIfIdle(state)
            return (true, state.takeRemovedEdges())
        }
        _ = consume removedEdges  // released here, before any job runs
        if finished { return }
        var domain = self
        while true {
            let (job, parent, removedEdges) = domain.state.withLock {
                state -> ((@Sendable (_Pass) -> Void)?, _PropagationDomain?, [AnyObject]?) in
                domain.takeOver(&state)
                if let parent = state.parent { return (nil, parent, nil) }
                // The only runner, between passes: no edge is being called.
                let removedEdges = state.runners == 1 ? state.takeRemovedEdges() : nil
                guard state.runners == 1, let job = state.next() else {
                    state.runners -= 1
                    domain.releaseIfIdle(state)
                    return (nil, nil, removedEdges)
                }
                pass.epoch = state.epoch
                return (job, nil, removedEdges)
            }
            _ = consume removedEdges  // released here, before the next job runs
            if let parent {
                domain = parent
                continue
            }
            guard let job else { return }
            job(pass)
            pass.run()
        }
    }

    /// Releases `removed` (what a removed edge ran, see `_Edge`) once no pass of the component is
    /// running: at once when none is, otherwise as soon as the passes running now have ended
    /// (`runQueued`: when the only runner is between two passes, or leaves). A pass that read
    /// the edge before it was removed may still call it until then; later passes cannot read it.
    /// Released with no lock held.
    func releaseAfterPasses(_ removed: AnyObject) {
        var domain = self
        while true {
            let parent = domain.state.withLock { state -> _PropagationDomain? in
                domain.takeOver(&state)
                if let parent = state.parent { return parent }
                if state.runners > 0 {
                    state.removedEdges.append(removed)
                } else {
                    domain.releaseIfIdle(state)
                }
                return nil
            }
            guard let parent else { return }  // `removed` goes here unless kept
            domain = parent
        }
    }

    /// The root of this component, found under the merge lock (roots change only there).
    private func root() -> _PropagationDomain {
        var domain = self
        while let parent = domain.state.withLock({ $0.parent }) { domain = parent }
        return domain
    }

    /// The epoch of the component's root: what an edge made now carries.
    @usableFromInline
    func currentEpoch() -> UInt64 {
        var domain = self
        while true {
            let (epoch, parent) = domain.state.withLock { ($0.epoch, $0.parent) }
            guard let parent else { return epoch }
            domain = parent
        }
    }

    /// The component joining those of `domains`: the root of the one they all belong to after
    /// merging (a new component when `domains` is empty).
    @usableFromInline
    static func joining(_ domains: [_PropagationDomain]) -> _PropagationDomain {
        guard let first = domains.first else { return _PropagationDomain() }
        if domains.count == 1 { return first }
        return _domainMerges.withLock { nextEpoch in
            var winner = first.root()
            for other in domains.dropFirst() {
                let loser = other.root()
                guard loser !== winner else { continue }
                nextEpoch &+= 1
                winner = merge(winner, loser, epoch: nextEpoch)
            }
            return winner
        }
    }

    /// Merges two roots, the smaller under the larger, in one critical section of both (taken in
    /// address order; any other path holds one domain lock at a time). Returns the new root.
    private static func merge(
        _ a: _PropagationDomain, _ b: _PropagationDomain, epoch: UInt64
    ) -> _PropagationDomain {
        let (low, high) = ObjectIdentifier(a) < ObjectIdentifier(b) ? (a, b) : (b, a)
        return low.state.withLock { lowState in
            high.state.withLock { highState in
                low.takeOver(&lowState)
                high.takeOver(&highState)
                let lowWins = lowState.size >= highState.size
                if lowWins {
                    _DomainState.absorb(&highState, into: &lowState, parent: low, epoch: epoch)
                } else {
                    _DomainState.absorb(&lowState, into: &highState, parent: high, epoch: epoch)
                }
                let winner = lowWins ? low : high
                winner.mirrorEpoch(lowWins ? lowState.epoch : highState.epoch)
                return winner
            }
        }
    }
}

/// The epochs of merges: each merge gives its root a newer one than any before. Held only by
/// merges, around the domain locks they take.
let _domainMerges = GraphLock<UInt64>(0)

/// What a component's domain holds under its lock.
@usableFromInline
struct _DomainState {
    /// The domain this one was merged into; `nil` for a root. Set once.
    @usableFromInline var parent: _PropagationDomain?
    /// How many domains were merged into this root (including itself).
    var size = 1
    /// Newer than the epoch of every merge into this root's tree (see `_PropagationDomain`).
    @usableFromInline var epoch: UInt64 = 0
    /// Threads running passes of the component: 1 normally, more just after a merge.
    @usableFromInline var runners = 0
    @usableFromInline var jobs: [(@Sendable (_Pass) -> Void)?] = []
    @usableFromInline var head = 0
    /// What edges removed while a pass ran ran (see `_PropagationDomain.releaseAfterPasses`).
    var removedEdges: [AnyObject] = []

    /// Takes out the edges removed while passes ran, once the last runner left; `nil` when
    /// there is none. Released by the caller after unlocking.
    mutating func takeRemovedEdges() -> [AnyObject]? {
        guard !removedEdges.isEmpty else { return nil }
        defer { removedEdges = [] }
        return removedEdges
    }

    /// Takes the next job; empties the queue when there is none.
    mutating func next() -> (@Sendable (_Pass) -> Void)? {
        if head < jobs.count {
            defer {
                jobs[head] = nil
                head += 1
            }
            return jobs[head]
        }
        jobs.removeAll(keepingCapacity: jobs.count <= 64)
        head = 0
        return nil
    }

    /// Queues `job` ahead of the others.
    mutating func pushFront(_ job: @escaping @Sendable (_Pass) -> Void) {
        if head > 0 {
            head -= 1
            jobs[head] = job
        } else {
            jobs.insert(job, at: 0)
        }
    }

    /// Moves `loser`'s queue and runners to `winner` and makes `parent` (the winner) its root.
    static func absorb(
        _ loser: inout _DomainState, into winner: inout _DomainState, parent: _PropagationDomain,
        epoch: UInt64
    ) {
        loser.parent = parent
        winner.size += loser.size
        winner.epoch = epoch
        winner.runners += loser.runners
        loser.runners = 0
        winner.removedEdges += loser.removedEdges
        loser.removedEdges = []
        while let job = loser.next() { winner.jobs.append(job) }
    }
}
