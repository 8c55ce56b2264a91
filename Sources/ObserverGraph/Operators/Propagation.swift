import Dispatch

/// Runs propagation passes one at a time, process-wide, in the order their changes arrived.
///
/// A source change that reaches an input node is submitted as a job. The thread that finds no
/// pass running runs the queue until it is empty. A job submitted from inside a pass (an
/// observer or operator closure that sets a source) is queued and run after the current pass,
/// by the same thread. A thread that submits while another thread runs passes waits until that
/// thread has run its job too, so a set still returns after its derived values delivered to
/// their nonisolated observers (they run on the other thread). No lock is held while a job runs
/// operator closures or delivers to observers.
@usableFromInline
final class _Propagator: @unchecked Sendable {
    @usableFromInline static let shared = _Propagator()

    private let queue = GraphLock(_PropagatorQueue())
    /// The one pass object, reused by every pass (passes run one at a time); touched only by the
    /// thread running passes.
    private let reusablePass = _Pass()

    /// Submits `event` of the input `node`: when no pass is running, runs it at once on this
    /// thread (then what was queued meanwhile), with no job allocated; otherwise as a job.
    @inlinable
    func submit<Value: Sendable>(_ node: _OperatorNode<Value>, _ event: GraphEvent<Value>) {
        guard let pass = beginIfIdle() else {
            submit { pass in node.emit(event, pass) }
            return
        }
        node.emit(event, pass)
        pass.run()
        runQueued()
    }

    /// Makes this thread the runner and returns the pass to run, when no pass is running.
    @usableFromInline
    func beginIfIdle() -> _Pass? {
        let thread = _currentThreadID()
        let began = queue.withLock { queue -> Bool in
            guard !queue.running else { return false }
            queue.running = true
            queue.runner = thread
            return true
        }
        return began ? reusablePass : nil
    }

    /// Runs the jobs queued while this thread ran passes, until the queue is empty.
    @usableFromInline
    func runQueued() {
        // Each job (and what it captured) is released when `runNext` returns, before its
        // waiting submitter is woken.
        while case (true, let done) = runNext() { done?.signal() }
    }

    @usableFromInline
    func submit(_ job: @escaping @Sendable (_Pass) -> Void) {
        let thread = _currentThreadID()
        let (mustRun, wait) = queue.withLock { queue -> (Bool, DispatchSemaphore?) in
            if !queue.running {
                queue.running = true
                queue.runner = thread
                queue.jobs.append((job, nil))
                return (true, nil)
            }
            if queue.runner == thread {
                queue.jobs.append((job, nil))
                return (false, nil)
            }
            let done = DispatchSemaphore(value: 0)
            queue.jobs.append((job, done))
            return (false, done)
        }
        if let wait { wait.wait() }
        guard mustRun else { return }
        runQueued()
    }

    /// Runs the next job and its pass; `false` when the queue is empty (and no longer running).
    private func runNext() -> (ran: Bool, done: DispatchSemaphore?) {
        guard let (job, done) = queue.withLock({ $0.next() }) else { return (false, nil) }
        let pass = reusablePass
        job(pass)
        pass.run()
        return (true, done)
    }
}

struct _PropagatorQueue {
    var jobs: [(job: @Sendable (_Pass) -> Void, done: DispatchSemaphore?)?] = []
    var head = 0
    var running = false
    var runner: UInt = 0

    mutating func next() -> (@Sendable (_Pass) -> Void, DispatchSemaphore?)? {
        if head < jobs.count {
            defer {
                jobs[head] = nil
                head += 1
            }
            return jobs[head]
        }
        jobs.removeAll(keepingCapacity: jobs.count <= 64)
        head = 0
        running = false
        runner = 0
        return nil
    }
}

/// A node a pass can mark (`_OperatorNode`).
@usableFromInline
protocol _Markable: AnyObject {
    var isMarked: Bool { get set }
}

extension _OperatorNode: _Markable {}

/// One propagation pass: what one source change does to the derived nodes, before anything is
/// delivered. Used only by the thread running it.
///
/// Single-input operators handle an event as soon as their parent emits it. A node with several
/// inputs (`combineLatest`) is only marked: marked nodes run in rank order once every node of
/// lower rank is done, so each sees all of this change's inputs at once, and runs once. Then every
/// node that emitted delivers its events to its observers, in the order the nodes first emitted.
@usableFromInline
final class _Pass {
    /// Marked nodes not run yet, in the order they were marked; each runs once per pass (a node's
    /// `isMarked` says it is here). (Exclusivity is unchecked on the pass's state: only the
    /// thread running the pass uses it, one call at a time.)
    @exclusivity(unchecked) private var marked: [(rank: Int, node: any _Markable, work: () -> Void)] = []
    /// The marks being run (kept to reuse its storage).
    @exclusivity(unchecked) private var running: [(rank: Int, node: any _Markable, work: () -> Void)] = []
    /// What delivers the events of each node that emitted some for its observers (its
    /// `publish`), in the order the nodes first emitted.
    @exclusivity(unchecked) @usableFromInline var touched: [() -> Void] = []

    init() {}

    /// Runs `work` for `node` once, after every node of a lower rank: nothing when the node is
    /// marked already. A node marked again after it ran (an input of a higher rank emitted into
    /// it, which only a switching operator can cause) runs again.
    @inlinable
    func mark<Value>(_ node: _OperatorNode<Value>, _ work: @autoclosure () -> () -> Void) {
        guard !node.isMarked else { return }
        node.isMarked = true
        append(node, rank: node.rank, work())
    }

    @usableFromInline
    func append(_ node: any _Markable, rank: Int, _ work: @escaping () -> Void) {
        marked.append((rank, node, work))
    }

    @usableFromInline
    func run() {
        // Runs the marks of the lowest rank, in marking order; the others wait, and marks made
        // meanwhile queue behind them.
        while let lowest = marked.lazy.map(\.rank).min() {
            swap(&marked, &running)
            for mark in running where mark.rank != lowest { marked.append(mark) }
            for mark in running where mark.rank == lowest {
                mark.node.isMarked = false
                mark.work()
            }
            running.removeAll(keepingCapacity: true)
        }
        for publish in touched { publish() }
        touched.removeAll(keepingCapacity: true)
    }
}
