import Synchronization

/// The fast path of an actor-isolated closure observer: a value sent on the observer's own actor,
/// with nothing queued before it, is handed to the closure through one atomic word instead of two
/// critical sections of the observer's lock.
///
/// The word says which path owns the observer:
/// - `0`: idle: open, nothing queued, no mailbox run and no task on its way;
/// - `running` (2): a fast call is running, on the actor;
/// - `slow` (4): the mailbox path owns it (events are queued, the mailbox is being run, or a
///   task is on its way to run it); set and cleared only under the sink's lock;
/// - `closed` (1): closed; no fast call starts again.
///
/// A fast call enters by exchanging `0` for `running` and leaves by exchanging it back. When the
/// exchange back fails, something happened meanwhile, and the call's end takes it over on the
/// actor: a close (`closed`): the caller releases the closure; events queued meanwhile (`slow`):
/// the caller runs the mailbox at once, in order. (A source delivers from one thread at a time,
/// and the fast call runs on that thread, so in practice only a close happens meanwhile; the
/// hand-over of queued events keeps the gate correct without relying on that.) Anything
/// that finds the word not `0` takes the lock path, which reads `running` as "a call is running
/// on the actor": it queues behind it and never calls the closure itself, so calls never nest or
/// overlap.
///
/// Thread safety: `Sendable`. `handler` is written only by the one party that releases it (a
/// close that finds no fast call running, or the end of the fast call a close marked), and read
/// only by a fast call that entered (the atomic exchanges order them).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@usableFromInline
final class _ActorGate<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let word = Atomic<UInt>(0)
    /// The closure's box, retained once by the gate (a fast call borrows it, with no reference
    /// count per call); handed to whoever releases it as a strong reference.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var handler: Unmanaged<_Handler<Value>>?

    @inlinable static var closed: UInt { 1 }
    @inlinable static var running: UInt { 2 }
    @inlinable static var slow: UInt { 4 }

    @inlinable
    init(_ handler: _Handler<Value>) {
        self.handler = Unmanaged.passRetained(handler)
    }

    deinit {
        handler?.release()  // not closed before its sink went (a sink always closes first)
    }

    /// Calls the closure with `event` when the gate is idle (on the sink's actor, by the
    /// caller); `false` when it is not, and the caller must take the lock path.
    @inlinable
    func callIfIdle(_ event: GraphEvent<Value>, sink: _EventSink<Value>) -> Bool {
        callIfIdle(sink: sink) { $0.call(event) }
    }

    /// `callIfIdle(_:sink:)` for a value event, given its value (see `_Handler.call(_:value:)`).
    @inlinable
    func callIfIdle(_ event: GraphEvent<Value>, value: Value, sink: _EventSink<Value>) -> Bool {
        callIfIdle(sink: sink) { $0.call(event, value: value) }
    }

    /// Runs `call` with the closure when the gate is idle (see `callIfIdle(_:sink:)`).
    @inlinable @inline(__always)
    func callIfIdle(sink: _EventSink<Value>, _ call: (_Handler<Value>) -> Void) -> Bool {
        guard
            word.compareExchange(expected: 0, desired: Self.running, ordering: .acquiringAndReleasing)
                .exchanged
        else { return false }
        handler?._withUnsafeGuaranteedRef { call($0) }
        if word.compareExchange(expected: Self.running, desired: 0, ordering: .acquiringAndReleasing)
            .exchanged
        {
            return true
        }
        sink._afterFastCall()
        return true
    }

    /// Marks the gate closed. Returns the closure to release when no fast call is running;
    /// otherwise that call's end releases it.
    @usableFromInline
    func close() -> _Handler<Value>? {
        var seen = word.load(ordering: .acquiring)
        while seen & Self.closed == 0 {
            let (exchanged, now) = word.compareExchange(
                expected: seen, desired: seen | Self.closed, ordering: .acquiringAndReleasing)
            if exchanged {
                guard seen & Self.running == 0 else { return nil }
                let released = handler?.takeRetainedValue()
                handler = nil
                return released
            }
            seen = now
        }
        return nil
    }

    /// Ends a fast call whose exchange back failed: clears `running`; returns the closure to
    /// release if the gate was closed meanwhile, and whether events were queued meanwhile.
    /// Under the sink's lock (so that `slow` cannot change meanwhile).
    @usableFromInline
    func endInterruptedCall() -> (released: _Handler<Value>?, queued: Bool) {
        let before = word.bitwiseAnd(~Self.running, ordering: .acquiringAndReleasing).oldValue
        guard before & Self.closed != 0 else { return (nil, before & Self.slow != 0) }
        let released = handler?.takeRetainedValue()
        handler = nil
        return (released, false)
    }

    /// Sets `slow`, under the sink's lock; returns whether a fast call was running (its end
    /// then finds `slow` and runs the mailbox).
    @usableFromInline
    func setSlow() -> Bool {
        // Usually already set while events queue up: a load, with no write to the shared word.
        // (With `slow` set no fast call can start, so `running` read here stays true until the
        // running call's end, which needs the lock the caller holds.)
        let seen = word.load(ordering: .acquiring)
        if seen & Self.slow != 0 { return seen & Self.running != 0 }
        return word.bitwiseOr(Self.slow, ordering: .acquiringAndReleasing).oldValue & Self.running != 0
    }

    /// Clears `slow`, under the sink's lock, once the mailbox path is idle.
    @usableFromInline
    func clearSlow() {
        _ = word.bitwiseAnd(~Self.slow, ordering: .acquiringAndReleasing)
    }
}
