/// Time-based operators: each takes any `Clock`, so an app passes `ContinuousClock()` and a test
/// drives time with the testing product's `TestClock`.
///
/// Common rules (each operator's doc says only what differs):
/// - Values leave at times set by the clock: a timer sleeps on it (`clock.sleep(until:)`, in a
///   task), then the value is emitted in a propagation pass of its own, started by the timer's
///   task, on the thread that runs it. Each operator has at most one timer pending.
/// - A failure passes at once and drops the values still waiting. A negative interval counts
///   as zero (values still leave through the clock, never during the send).
/// - When the derived value is released (its last token and reference gone), its pending timer
///   is cancelled: nothing is emitted after that, and no task outlives the sleep it cancels.
/// - On a value source, the current value the operator starts from is timed like any value.
/// - A value released by a timer reaches the result's nonisolated observers on the thread of
///   the timer's task, before that task ends; actor observers get it through their mailbox.
/// - Thread safety: safe from any thread. Callbacks: none of their own; the clock's `now` and
///   `sleep(until:tolerance:)`, with no lock held.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension ObservableSource {
    /// A derived value whose node closes `timer` when it goes.
    private func _deriveTimed<C: Clock>(
        _ name: String, _ timer: _OperatorTimer<C>,
        _ handle: @escaping @Sendable (_OperatorNode<Value>, GraphEvent<Value>, _Pass?) -> Void
    ) -> DerivedValue<Value> {
        let parent = _operatorNodeForNewEdge()
        return DerivedValue(name, upstreams: [self], inputs: [parent], replays: parent.replays) { node in
            node.onDetach { timer.close() }
            parent.attach(node, handle)
        }
    }

    /// The latest value, once this source has been quiet for `interval` (Combine's
    /// `debounce(for:scheduler:)`, RxSwift's `debounce`): each value restarts the wait, so a
    /// burst passes only its last value, `interval` after it.
    ///
    ///     let query = ObservableValue("")
    ///     let search = query.debounce(for: .milliseconds(300), clock: ContinuousClock())
    ///
    /// Finishing flushes the waiting value at once, then finishes; a failure drops it.
    ///
    /// Thread safety: safe from any thread. Callbacks: the clock's, as in the common rules.
    /// - Complexity: O(1) per event; each value starts one timer task and cancels the previous.
    public func debounce<C: Clock>(for interval: C.Duration, clock: C) -> DerivedValue<Value> {
        let timer = _OperatorTimer(clock: clock)
        let waiting = _OperatorCell<Value?>(nil)
        return _deriveTimed("debounce", timer) { node, event, pass in
            switch event {
            case .value(let value):
                waiting.value = value
                timer.schedule(at: timer.deadline(after: interval), for: node) { node, pass in
                    guard let value = waiting.value else { return }
                    waiting.value = nil
                    node.emit(.value(value), pass)
                }
            case .finished:
                timer.cancel()
                if let value = waiting.value { node.emit(.value(value), pass) }
                waiting.value = nil
                node.emit(.finished, pass)
            case .failed:
                timer.cancel()
                waiting.value = nil
                node.emit(event, pass)
            }
        }
    }

    /// At most one value per `interval` (Combine's `throttle(for:scheduler:latest:)`, RxSwift's
    /// `throttle(_:latest:scheduler:)`). A value arriving when no interval is running passes at
    /// once and starts one. Values arriving during an interval wait for its end: the latest of
    /// them with `latest: true`, the first with `latest: false`; at the end, the waiting value
    /// (if any) passes and starts the next interval.
    ///
    ///     let taps = EventChannel<Void>()
    ///     let refreshes = taps.throttle(for: .seconds(1), clock: ContinuousClock(), latest: false)
    ///
    /// Unlike RxSwift's `latest: false`, which drops the values of an interval, the first of them
    /// passes at its end (as in Combine). Finishing flushes the waiting value at once, then
    /// finishes; a failure drops it.
    ///
    /// Thread safety: safe from any thread. Callbacks: the clock's, as in the common rules.
    /// - Complexity: O(1) per event; one timer task per interval.
    public func throttle<C: Clock>(
        for interval: C.Duration, clock: C, latest: Bool
    ) -> DerivedValue<Value> {
        let timer = _OperatorTimer(clock: clock)
        let state = _OperatorCell(_ThrottleState<Value>())
        @Sendable func startInterval(_ node: _OperatorNode<Value>) {
            state.value.running = true
            timer.schedule(at: timer.deadline(after: interval), for: node) { node, pass in
                guard let value = state.value.waiting else {
                    state.value.running = false
                    return
                }
                state.value.waiting = nil
                node.emit(.value(value), pass)
                startInterval(node)
            }
        }
        return _deriveTimed("throttle", timer) { node, event, pass in
            switch event {
            case .value(let value):
                if !state.value.running {
                    node.emit(.value(value), pass)
                    startInterval(node)
                } else if latest || state.value.waiting == nil {
                    state.value.waiting = value
                }
            case .finished:
                timer.cancel()
                if let value = state.value.waiting { node.emit(.value(value), pass) }
                state.value = _ThrottleState()
                node.emit(.finished, pass)
            case .failed:
                timer.cancel()
                state.value = _ThrottleState()
                node.emit(event, pass)
            }
        }
    }

    /// Every value `interval` later, in order (Combine's `delay(for:scheduler:)`, RxSwift's
    /// `delay`), each in a propagation pass of its own, also when several come due at once (sent
    /// in one instant, or a clock that woke late): a `combineLatest` below sees every one.
    /// Finishing is delayed too: the values still waiting pass at their times, then the result
    /// finishes. A failure passes at once and drops them.
    ///
    ///     let saved = edits.delay(for: .seconds(2), clock: ContinuousClock())
    ///
    /// Thread safety: safe from any thread. Callbacks: the clock's, as in the common rules.
    /// - Complexity: O(1) amortized per event; one timer task at a time (for the earliest
    ///   waiting event; events already due when one leaves follow in the passes right after
    ///   it, with no task). The waiting events are kept: O(events within one interval) memory.
    public func delay<C: Clock>(for interval: C.Duration, clock: C) -> DerivedValue<Value> {
        let timer = _OperatorTimer(clock: clock)
        let queue = _OperatorCell(_DelayQueue<Value, C.Instant>())
        @Sendable func scheduleHead(_ node: _OperatorNode<Value>, draining: Bool = false) {
            guard let head = queue.value.first else { return }
            // The head only: each event leaves in a pass of its own, so a join below sees every
            // one. While draining, the next one due already (sent in the same instant, or a
            // clock that woke late) gets the pass right after this one, with no task or sleep.
            let work: @Sendable (_OperatorNode<Value>, _Pass?) -> Void = { node, pass in
                if let event = queue.value.removeFirst() { node.emit(event, pass) }
                scheduleHead(node, draining: true)
            }
            if draining && head.deadline <= timer.clock.now {
                timer.scheduleNext(for: node, work)
            } else {
                timer.schedule(at: head.deadline, for: node, work)
            }
        }
        return _deriveTimed("delay", timer) { node, event, pass in
            if case .failed = event {
                timer.cancel()
                queue.value = _DelayQueue()
                node.emit(event, pass)
                return
            }
            let wasEmpty = queue.value.first == nil
            queue.value.append(event, at: timer.deadline(after: interval))
            if wasEmpty { scheduleHead(node) }
        }
    }
}

/// A `throttle`'s state: whether an interval runs, and the value waiting for its end.
struct _ThrottleState<Value> {
    var running = false
    var waiting: Value?
}

/// A `delay`'s waiting events, first in, first out, each with the instant it is due.
struct _DelayQueue<Value, Instant> {
    private var items: [(deadline: Instant, event: GraphEvent<Value>)?] = []
    private var head = 0

    var first: (deadline: Instant, event: GraphEvent<Value>)? {
        head < items.count ? items[head] : nil
    }

    mutating func append(_ event: GraphEvent<Value>, at deadline: Instant) {
        items.append((deadline, event))
    }

    /// Removes and returns the first event; `nil` when empty.
    mutating func removeFirst() -> GraphEvent<Value>? {
        guard head < items.count, let item = items[head] else { return nil }
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 64)
            head = 0
        }
        return item.event
    }
}
