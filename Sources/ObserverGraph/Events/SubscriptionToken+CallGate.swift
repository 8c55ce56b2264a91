import Dispatch
import Synchronization

/// The call gate of a nonisolated closure observer: its calls and its `close()` meet on one
/// atomic word, so a call costs two atomic exchanges instead of two critical sections.
///
/// A nonisolated sink is called by one thread at a time: its source's drainer (one per source).
/// The word says who is inside:
/// - `0`: open, no call running;
/// - `closed` (1): closed, no call running; no call starts again;
/// - `thread << 1`: that thread is calling the closure;
/// - `thread << 1 | 1`: that thread is calling, and the gate closes when the call returns (closes
///   wait for that; a terminal event's call enters this way, so the observation reads as over
///   during its last call).
///
/// A call enters by exchanging `0` for its thread and leaves by exchanging it back (or for
/// `closed` after a terminal event). A close exchanges `0` for `closed`, or marks the running
/// call and waits on a semaphore the call's end signals (through the sink's lock, which only
/// this rare case takes). A close from inside the call itself only marks it and returns at
/// once. The closure is released, with no lock held, by whoever closes the gate with no call
/// running, or by a close that waited for the call (on the closer's thread: see `deliver`).
///
/// Thread safety: `Sendable`. `call` is written only by the one party that releases it (after
/// the gate is closed with no call running), and read only by a call that entered the gate
/// (which the atomic exchanges, and the sink's lock for a handed-off release, order).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@usableFromInline
final class _CallGate<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let word = Atomic<UInt>(0)
    /// The closure, in a box this gate owns (retained once, released by `release()`): a call
    /// borrows it, with no reference count per call.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var call: Unmanaged<_Handler<Value>>?

    @inlinable static var closed: UInt { 1 }

    @inlinable
    init(_ call: _Handler<Value>) {
        self.call = Unmanaged.passRetained(call)
    }

    deinit {
        call?.release()  // not closed before the sink went (a sink always closes first)
    }

    /// Calls the closure with `event` unless the gate is closed; a terminal event closes it.
    /// `thread` is the calling thread's `_currentThreadID()`; `sink` (alive for the call: the
    /// caller holds it) is read only when the gate closes.
    @inlinable
    func deliver(_ event: GraphEvent<Value>, sink: Unmanaged<_EventSink<Value>>, thread: UInt) {
        enter(terminal: event.isTerminal, sink: sink, thread: thread) { $0.call(event) }
    }

    /// `deliver(_:sink:thread:)` for a value event, given its value (see
    /// `_Handler.call(_:value:)`).
    @inlinable
    func deliver(
        _ event: GraphEvent<Value>, value: Value, sink: Unmanaged<_EventSink<Value>>, thread: UInt
    ) {
        enter(terminal: false, sink: sink, thread: thread) { $0.call(event, value: value) }
    }

    /// Runs `call` with the closure unless the gate is closed (see `deliver(_:sink:thread:)`).
    @inlinable @inline(__always)
    func enter(
        terminal: Bool, sink: Unmanaged<_EventSink<Value>>, thread: UInt, _ call: (_Handler<Value>) -> Void
    ) {
        let me = thread << 1
        let entry = terminal ? me | 1 : me
        while true {
            let (entered, seen) = word.compareExchange(
                expected: 0, desired: entry, ordering: .acquiringAndReleasing)
            if entered { break }
            if seen & 1 != 0 { return }  // closed, or closing
            // Another thread inside: not expected (one drainer per source), so wait it out
            // rather than skip the event.
        }
        self.call?._withUnsafeGuaranteedRef { call($0) }
        if !terminal,
            word.compareExchange(expected: me, desired: 0, ordering: .acquiringAndReleasing).exchanged
        {
            return
        }
        closeAfterCall(sink: sink.takeUnretainedValue())
    }

    /// The end of a call after which the gate closes: after a terminal event, or because closes
    /// wait for this call (or the closure closed itself). Closes it and wakes the closers. One
    /// of them releases the closure, on its own thread: its deinit may cancel an observation
    /// whose call that closer is making, which must not wait for this thread. With no closer
    /// waiting, it is released here. (Out of line: the usual call never comes here.)
    @usableFromInline @inline(never)
    func closeAfterCall(sink: _EventSink<Value>) {
        let waiters = sink.state.withLock { state -> [DispatchSemaphore] in
            word.store(Self.closed, ordering: .releasing)
            guard !state.waiters.isEmpty else { return [] }
            state.releaseHandedOff = true
            defer { state.waiters = [] }
            return state.waiters
        }
        if waiters.isEmpty { release() }
        for waiter in waiters { waiter.signal() }
    }

    /// Closes the gate: returns once no call is running on another thread (a call from this
    /// thread, the closure cancelling itself, closes the gate when it returns).
    @usableFromInline
    func close(sink: _EventSink<Value>) {
        let me = _currentThreadID() << 1
        while true {
            let seen = word.load(ordering: .acquiring)
            if seen == Self.closed { return }
            if seen == 0 {
                if word.compareExchange(expected: 0, desired: Self.closed, ordering: .acquiringAndReleasing)
                    .exchanged
                {
                    release()
                    return
                }
                continue
            }
            if seen & ~1 == me {
                // Inside its own call: mark it; the call's end closes the gate.
                if seen & 1 != 0
                    || word.compareExchange(
                        expected: seen, desired: seen | 1, ordering: .acquiringAndReleasing
                    )
                    .exchanged
                {
                    return
                }
                continue
            }
            // Another thread is calling: register, mark the call, wait for its end.
            let waiter = DispatchSemaphore(value: 0)
            sink.state.withLock { $0.waiters.append(waiter) }
            if seen & 1 == 0,
                !word.compareExchange(expected: seen, desired: seen | 1, ordering: .acquiringAndReleasing)
                    .exchanged
            {
                forget(waiter, sink: sink)  // the call ended meanwhile: start over
                continue
            }
            // The end stores `closed` (in the critical section where it takes the waiters): if it
            // has already taken the list, `closed` is visible here.
            if word.load(ordering: .acquiring) == Self.closed {
                forget(waiter, sink: sink)
                return
            }
            waiter.wait()
            if sink.state.withLock({ $0.takeHandedOffRelease() }) { release() }
            return
        }
    }

    /// Whether the gate is closed or closing.
    var isClosed: Bool {
        word.load(ordering: .acquiring) & 1 != 0
    }

    /// Drops the closure (and what it captured), with no lock held.
    @usableFromInline
    func release() {
        let released = call
        call = nil
        released?.release()
    }

    /// Unregisters `waiter`; releases the closure when the call's end handed its release to
    /// the waiters and no other one has taken it.
    private func forget(_ waiter: DispatchSemaphore, sink: _EventSink<Value>) {
        let mustRelease = sink.state.withLock { state -> Bool in
            if let index = state.waiters.firstIndex(where: { $0 === waiter }) {
                state.waiters.remove(at: index)
            }
            return state.takeHandedOffRelease()
        }
        if mustRelease { release() }
    }
}
