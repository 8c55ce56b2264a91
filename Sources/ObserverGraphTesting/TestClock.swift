import ObserverGraph

/// A Swift `Clock` whose time moves only when a test says so, for the time operators
/// (`debounce`, `throttle`, `delay`) and any code that sleeps on a clock it is given.
///
///     let clock = TestClock()
///     let query = EventChannel<String>()
///     let search = query.debounce(for: .seconds(1), clock: clock)
///     let token = search.observeValuesNonisolated { print($0) }
///     query.send("sw")
///     query.send("swift")
///     await clock.advance(by: .seconds(1))   // prints "swift"
///
/// `advance` resumes the sleepers that come due, one at a time, in the order of their deadlines
/// (sleepers with one deadline in the order they started sleeping), with `now` at each one's
/// deadline. **Settling:** before it starts and after it resumes each sleeper, it waits until
/// every timer the kit's operators started on this clock is asleep or done, so a test never
/// races the tasks behind them: when `advance` returns, every value due by then has been
/// delivered to nonisolated observers. Other tasks sleeping on the clock are resumed but not
/// waited for.
///
/// Thread safety: `Sendable`; every member is safe from any thread. Do not advance one clock
/// from two tasks at once.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
public final class TestClock: Clock, Sendable {
    /// A point in a test clock's time: how long after the clock's start it is.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock's start (instant zero).
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public init(offset: Duration) {
            self.offset = offset
        }

        /// This instant moved by `duration`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The duration from this instant to `other`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset, like `2.0 seconds`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public var description: String { offset.description }
    }

    let state = GraphLock(_TestClockState())

    /// A clock at instant zero, with no sleepers.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init() {}

    /// The current instant; it moves only in `advance`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var now: Instant {
        state.withLock { Instant(offset: $0.now) }
    }

    /// Zero: a test clock has no granularity.
    ///
    /// Thread safety: a constant. Callbacks: none.
    /// - Complexity: O(1).
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on this clock now.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// Suspends until `advance` reaches `deadline`; returns at once when it has. Throws
    /// `CancellationError` when the task is cancelled first (its sleeper is removed at once).
    ///
    /// Thread safety: safe from any task. Callbacks: none.
    /// - Complexity: O(n), n = sleepers (kept sorted by deadline).
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let isTimer = _OperatorTimerContext.isTimer
        let id = state.withLock { $0.takeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                park(id: id, deadline: deadline.offset, isTimer: isTimer, continuation)
            }
        } onCancel: {
            let sleeper = self.state.withLock { $0.unpark(id) }
            sleeper?.resume(.failure(CancellationError()))
        }
    }

    /// Parks a sleeper, or resumes it at once when its task is cancelled or its deadline has
    /// passed. The cancelled flag is set before the cancellation handler runs: checked under the
    /// lock the handler takes, either this sees it or the handler finds the sleeper.
    private func park(
        id: UInt64, deadline: Duration, isTimer: Bool, _ continuation: CheckedContinuation<Void, any Error>
    ) {
        let sleeper = _Sleeper(id: id, deadline: deadline, isTimer: isTimer) { continuation.resume(with: $0) }
        typealias Outcome = (Result<Void, any Error>?, [@Sendable () -> Void])
        let (outcome, settled) = state.withLock { state -> Outcome in
            if Task.isCancelled { return (.failure(CancellationError()), []) }
            if deadline <= state.now { return (.success(()), []) }
            state.park(sleeper)
            return (nil, isTimer ? state.timerSettled() : [])
        }
        for resume in settled { resume() }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Moves time forward by `duration` (see `advance(to:)`).
    ///
    /// Thread safety: safe from any task; not from two at once on one clock.
    /// Callbacks: resumes the sleepers due; operator timers deliver their values meanwhile.
    /// - Complexity: O(d × n) for d sleepers due, n = sleepers, plus the work they resume.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves time forward to `instant` (never backward): settles, then resumes every sleeper due
    /// by then, one at a time in deadline order, with `now` at its deadline, settling after
    /// each; `now` ends at `instant`. Settling waits until every operator timer started on this
    /// clock is asleep or done; it stops waiting if the calling task is cancelled.
    ///
    /// Thread safety: safe from any task; not from two at once on one clock.
    /// Callbacks: resumes the sleepers due; operator timers deliver their values meanwhile.
    /// - Complexity: O(d × n) for d sleepers due, n = sleepers, plus the work they resume.
    public func advance(to instant: Instant) async {
        await settle()
        while let sleeper = state.withLock({ $0.takeDue(by: instant.offset) }) {
            sleeper.resume(.success(()))
            await settle()
        }
    }

    /// Waits until every timer the kit's operators started on this clock is asleep or done (so
    /// the values they deliver have been delivered); returns early if the task is cancelled.
    ///
    /// Thread safety: safe from any task. Callbacks: none.
    /// - Complexity: O(1) plus the wait.
    public func settle() async {
        let id = state.withLock { $0.takeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || state.unsettledTimers == 0 { return true }
                    state.settleWaiters[id] = { continuation.resume() }
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.settleWaiters.removeValue(forKey: id) }
            waiter?()
        }
    }
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension TestClock: _OperatorTimerTracking {
    /// Plumbing: an operator timer was created; `advance` waits for it. Provided by the kit.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    package func _timerCreated() {
        state.withLock { $0.unsettledTimers += 1 }
    }

    /// Plumbing: an operator timer's task ended. Provided by the kit.
    ///
    /// Thread safety: safe from any thread. Callbacks: resumes waiting `settle` calls.
    /// - Complexity: O(w), w = waiting `settle` calls.
    package func _timerEnded() {
        let settled = state.withLock { $0.timerSettled() }
        for resume in settled { resume() }
    }
}

/// One task sleeping on a test clock.
struct _Sleeper: Sendable {
    let id: UInt64
    let deadline: Duration
    let isTimer: Bool
    let resume: @Sendable (Result<Void, any Error>) -> Void
}

/// A test clock's time, sleepers and settling count.
struct _TestClockState: Sendable {
    var now: Duration = .zero
    var nextID: UInt64 = 0
    /// Sorted by deadline, then by arrival.
    var sleepers: [_Sleeper] = []
    /// Operator timers created or resumed and neither asleep nor ended.
    var unsettledTimers = 0
    var settleWaiters: [UInt64: @Sendable () -> Void] = [:]

    mutating func takeID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    mutating func park(_ sleeper: _Sleeper) {
        let index = sleepers.firstIndex { $0.deadline > sleeper.deadline } ?? sleepers.endIndex
        sleepers.insert(sleeper, at: index)
    }

    /// Removes a cancelled sleeper; a removed timer is awake again (until its task ends).
    mutating func unpark(_ id: UInt64) -> _Sleeper? {
        guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        let sleeper = sleepers.remove(at: index)
        if sleeper.isTimer { unsettledTimers += 1 }
        return sleeper
    }

    /// The first sleeper due by `limit`, removed, with `now` moved to its deadline; otherwise
    /// `nil`, with `now` moved to `limit`.
    mutating func takeDue(by limit: Duration) -> _Sleeper? {
        guard let first = sleepers.first, first.deadline <= limit else {
            now = max(now, limit)
            return nil
        }
        sleepers.removeFirst()
        now = max(now, first.deadline)
        if first.isTimer { unsettledTimers += 1 }
        return first
    }

    /// One operator timer fell asleep or ended: the `settle` waiters to resume when no timer is
    /// left awake.
    mutating func timerSettled() -> [@Sendable () -> Void] {
        unsettledTimers -= 1
        guard unsettledTimers == 0 else { return [] }
        defer { settleWaiters = [:] }
        return Array(settleWaiters.values)
    }
}
