import ObserverGraph

/// Virtual time for tests and demos: a step counter that moves only when you say so, and actions
/// scheduled at steps.
///
///     let clock = VirtualClock()
///     let done = ObservableValue(true)
///     let recorder = RecordingObserver<Bool>(clock: clock, name: "item.Done")
///     recorder.record(done)                               // T at step 0
///     clock.schedule(at: 3) { done.value = false }        // "at t=3, set done = false"
///     clock.schedule(at: 5) { done.finish() }
///     clock.run()
///     MarbleDiagram(recorder.marbleRow { $0 ? "T" : "F" })   // item.Done: T--F-|->
///
/// Recorders read `now` when an event reaches them, so everything that happens while an action
/// runs is recorded at that action's step. The clock starts at step 0.
///
/// Thread safety: `Sendable`; every method is safe from any thread. Actions run on the thread
/// that calls `advance` or `run`, one at a time, with no lock held; they may schedule more
/// actions.
public final class VirtualClock: @unchecked Sendable {
    // Unchecked: the actions are not `Sendable` (tests capture whatever they need). They are only
    // stored under the lock and run by the thread that advances the clock.
    private let state = GraphLock(_ClockState())

    /// A clock at step 0 with nothing scheduled.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init() {}

    /// The current step.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var now: Int {
        state.withLock { $0.now }
    }

    /// Schedules `action` to run at `step`; a step in the past (before `now`) means "now", and
    /// actions at the same step run in the order they were scheduled. Nothing runs until you call
    /// `advance` or `run`.
    ///
    /// Thread safety: safe from any thread, also from inside an action.
    /// Callbacks: none now; `action` later.
    /// - Complexity: O(n), n = actions pending (kept sorted).
    public func schedule(at step: Int, _ action: @escaping () -> Void) {
        state.withLock { state in
            let entry = _ScheduledAction(step: max(step, state.now), action: action)
            // After every entry at the same step or earlier: stable order.
            var low = 0
            var high = state.pending.count
            while low < high {
                let middle = (low + high) / 2
                if state.pending[middle].step <= entry.step { low = middle + 1 } else { high = middle }
            }
            state.pending.insert(entry, at: low)
        }
    }

    /// Moves time forward by `steps`, running every action scheduled up to the new step, each at
    /// its own step.
    ///
    /// Thread safety: safe from any thread; do not advance one clock from two threads at once if
    /// you need the actions in order.
    /// Callbacks: the due actions, on this thread, with no lock held.
    /// - Complexity: O(a × n) for a due actions, n = actions pending, plus the actions' cost.
    public func advance(by steps: Int = 1) {
        let (target, overflow) = now.addingReportingOverflow(steps)
        advance(to: overflow ? (steps > 0 ? .max : now) : target)
    }

    /// Moves time forward to `step` (never backward), running every action scheduled up to it,
    /// each at its own step.
    ///
    /// Thread safety: as `advance(by:)`.
    /// Callbacks: the due actions, on this thread, with no lock held.
    /// - Complexity: as `advance(by:)`.
    public func advance(to step: Int) {
        while let action = next(upTo: step) { action() }
    }

    /// Runs every scheduled action, including those they schedule, until none is left. `now`
    /// ends at the step of the last action (it does not move if nothing was scheduled).
    ///
    /// Thread safety: as `advance(by:)`.
    /// Callbacks: the actions, on this thread, with no lock held.
    /// - Complexity: as `advance(by:)`.
    public func run() {
        while let action = next(upTo: nil) { action() }
    }

    /// Takes the next action due by `limit` and moves `now` to its step; when none is due, moves
    /// `now` to `limit` and returns `nil`. The action is moved out, to be run and released with
    /// no lock held.
    private func next(upTo limit: Int?) -> (() -> Void)? {
        state.withLock { state in
            guard let first = state.pending.first, first.step <= limit ?? .max else {
                if let limit { state.now = max(state.now, limit) }
                return nil
            }
            state.pending.removeFirst()
            state.now = max(state.now, first.step)
            return first.action
        }
    }
}

private struct _ScheduledAction {
    let step: Int
    let action: () -> Void
}

private struct _ClockState {
    var now = 0
    var pending: [_ScheduledAction] = []
}
