/// What a clock learns about the timers of the time operators (`debounce`, `throttle`,
/// `delay`), so that a test clock can wait until the work a timer starts is done. Package
/// plumbing: the testing product's `TestClock` conforms; any other clock needs nothing.
///
/// Thread safety: both calls may come from any thread, with no lock of the kit held.
package protocol _OperatorTimerTracking: Sendable {
    /// A timer's task was created and is about to sleep on this clock. Called synchronously by
    /// the operator, before the task can run.
    func _timerCreated()
    /// That task ended: after its work ran, or after its sleep was cancelled.
    func _timerEnded()
}

/// Marks the sleeps of operator timers, so a tracking clock can tell them from other sleepers.
package enum _OperatorTimerContext {
    /// True inside the sleep of an operator timer.
    @TaskLocal package static var isTimer = false
}

/// The one pending timer of a time operator: a task that sleeps on the operator's clock, then
/// runs the operator's work for its node in a propagation pass (through the node's `accept`,
/// so work arriving while the node is built waits for the builder).
///
/// Scheduling replaces the pending timer; a replaced or cancelled timer never runs its work
/// (a generation check in the pass, since a task may wake as it is cancelled). The task holds
/// the node weakly: a released node's timer does nothing; the node cancels it at deinit.
///
/// Thread safety: `Sendable`; `schedule` and `cancel` are called from the operator's handler
/// (one call at a time per operator), `close` from the node's deinit (any thread, possibly while
/// the handler runs).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
final class _OperatorTimer<C: Clock>: Sendable {
    let clock: C
    private let tracking: (any _OperatorTimerTracking)?
    private let current = GraphLock(_TimerSlot())

    init(clock: C) {
        self.clock = clock
        tracking = clock as? any _OperatorTimerTracking
    }

    /// `clock.now` advanced by `interval`; a negative interval counts as zero.
    func deadline(after interval: C.Duration) -> C.Instant {
        clock.now.advanced(by: max(interval, .zero))
    }

    /// Replaces the pending timer with one that runs `work` for `node` at `deadline`.
    func schedule<Output: Sendable>(
        at deadline: C.Instant, for node: _OperatorNode<Output>,
        _ work: @escaping @Sendable (_OperatorNode<Output>, _Pass?) -> Void
    ) {
        let generation = current.withLock { slot -> UInt64? in
            guard !slot.closed else { return nil }  // the node is gone: no task
            slot.generation &+= 1
            return slot.generation
        }
        guard let generation else { return }
        tracking?._timerCreated()
        let task = Task { [clock, tracking, weak node] in
            do {
                try await _OperatorTimerContext.$isTimer.withValue(true) {
                    try await clock.sleep(until: deadline, tolerance: nil)
                }
            } catch {
                tracking?._timerEnded()
                return
            }
            guard let node else {
                tracking?._timerEnded()
                return
            }
            // Queued when another thread runs a pass of the component: the timer has ended once
            // the pass that runs its work has delivered, whichever thread runs it.
            node.domain.submit { pass in
                node.accept(GraphEvent<Void>.value(()), pass) { node, _, pass in
                    guard self.claim(generation) else { return }
                    work(node, pass)
                }
                if let tracking { pass.whenDelivered { tracking._timerEnded() } }
            }
        }
        let replaced = current.withLock { slot -> Task<Void, Never>? in
            guard slot.generation == generation else { return task }  // replaced meanwhile
            defer { slot.task = task }
            return slot.task
        }
        replaced?.cancel()
    }

    /// Replaces the pending timer with work due already, called from the timer's own work: a
    /// job of the node's component, run right after the pass running now (by the thread running
    /// it), with no task and no sleep. Tracked like a timer, so a test clock waits for it.
    func scheduleNext<Output: Sendable>(
        for node: _OperatorNode<Output>, _ work: @escaping @Sendable (_OperatorNode<Output>, _Pass?) -> Void
    ) {
        let (generation, replaced) = current.withLock { slot -> (UInt64?, Task<Void, Never>?) in
            guard !slot.closed else { return (nil, nil) }  // the node is gone: nothing runs
            slot.generation &+= 1
            defer { slot.task = nil }
            return (slot.generation, slot.task)
        }
        replaced?.cancel()
        guard let generation else { return }
        tracking?._timerCreated()
        node.domain.submit { [tracking, weak node] pass in
            if let node {
                node.accept(GraphEvent<Void>.value(()), pass) { node, _, pass in
                    guard self.claim(generation) else { return }
                    work(node, pass)
                }
            }
            if let tracking { pass.whenDelivered { tracking._timerEnded() } }
        }
    }

    /// Cancels the pending timer, if any: its work will not run.
    func cancel() {
        let task = current.withLock { slot -> Task<Void, Never>? in
            slot.generation &+= 1
            defer { slot.task = nil }
            return slot.task
        }
        task?.cancel()
    }

    /// Cancels the pending timer for good: the node's deinit, on any thread. A schedule made
    /// after it (by a pass still running the operator on another thread) starts no task.
    func close() {
        let task = current.withLock { slot -> Task<Void, Never>? in
            slot.closed = true
            slot.generation &+= 1
            defer { slot.task = nil }
            return slot.task
        }
        task?.cancel()
    }

    /// Whether the timer of `generation` is still the pending one; if so, it is no longer pending.
    private func claim(_ generation: UInt64) -> Bool {
        current.withLock { slot in
            guard slot.generation == generation else { return false }
            slot.task = nil
            return true
        }
    }
}

/// The pending timer of one operator.
struct _TimerSlot: Sendable {
    var generation: UInt64 = 0
    var task: Task<Void, Never>?
    /// The node is gone (`close`): nothing is scheduled any more.
    var closed = false
}
