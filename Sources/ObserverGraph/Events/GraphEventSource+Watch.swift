import Synchronization

/// Tells a source's deliveries when their roster is out of date, with no lock: the node's
/// registry reports every join and leave of an observer here (it is the registry's extras, see
/// `_RegistryExtras`), in the critical section that makes it.
///
/// A delivery then needs no critical section of the node at all: it reads the node's observers
/// again only when `stale` says they changed, and it learns of a removal made by its own thread
/// during the loop (a closure removing another observer) through `changedWhileDelivering`, after
/// which it re-checks each remaining observer, as the core's `broadcast` does. A removal made by
/// another thread during the loop takes effect at the next delivery, as in the core.
///
/// It also holds the source's drain word (`drain`), so that a drain that delivered everything
/// ends without taking the source's lock again.
///
/// Thread safety: `Sendable`. `stale`, `deliveringThread` and `drain` are atomics;
/// `changedWhileDelivering` is written by a change made on the delivering thread and read by
/// that thread's delivery only (drainers hand over through `drain`). What it inherits from
/// `_RegistryExtras` (`boxes`, `generation`) is touched only under the node's lock.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@usableFromInline
final class _MembershipWatch: _RegistryExtras, @unchecked Sendable {
    /// Set by every change of the node's observers; cleared by the delivery that reads them.
    @usableFromInline let stale = Atomic<Bool>(true)
    /// The thread running a delivery of this source right now; 0 when none is.
    @usableFromInline let deliveringThread = Atomic<UInt>(0)
    /// The delivering thread changed the observers during its delivery.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var changedWhileDelivering = false
    /// Who delivers the source's queue: `idle` (nobody; the queue is empty), `drained` (a
    /// drainer runs and nothing waits for it) or `queued` (a drainer runs and must look at the
    /// queue before it stops). Written under the source's lock, except by the drainer that ends
    /// its drain from `drained` (`endDrainWithoutLock`); acquire and release order one drainer's
    /// work before the next one's.
    @usableFromInline let drain = Atomic<UInt8>(_DrainWord.idle)

    @usableFromInline override init() {}

    /// Under the source's lock: makes the caller the drainer if nobody drains (`true`; `queued`:
    /// the caller put its first action in the queue), or else tells the drainer to look at the
    /// queue, where the caller puts its action (`false`).
    /// - Complexity: O(1); one atomic read-modify-write at most, none when nobody drains.
    @inlinable
    func startDrain(queued: Bool) -> Bool {
        var word = drain.load(ordering: .acquiring)
        while true {
            if word == _DrainWord.idle {
                // Nobody writes the word without the lock while it is idle.
                drain.store(queued ? _DrainWord.queued : _DrainWord.drained, ordering: .relaxed)
                return true
            }
            if word == _DrainWord.queued { return false }
            let (exchanged, original) = drain.compareExchange(
                expected: _DrainWord.drained, desired: _DrainWord.queued, ordering: .acquiringAndReleasing)
            if exchanged { return false }
            word = original  // the drainer ended meanwhile: start again
        }
    }

    /// The drainer, under the source's lock, took the last queued action (see
    /// `_SourceState.queueEmptied`).
    /// - Complexity: O(1).
    @inlinable
    func queueEmptied() {
        drain.store(_DrainWord.drained, ordering: .relaxed)  // read under the lock, or by the drainer
    }

    /// The drainer, under the source's lock, found the queue empty: the drain ends.
    /// - Complexity: O(1).
    @inlinable
    func endDrain() {
        drain.store(_DrainWord.idle, ordering: .releasing)
    }

    /// The drainer, without the lock: ends the drain if nothing was queued since it emptied the
    /// queue (`true`); otherwise (`false`) it must take the lock and look at the queue.
    /// - Complexity: O(1); one atomic read-modify-write.
    @inlinable
    func endDrainWithoutLock() -> Bool {
        drain.compareExchange(expected: _DrainWord.drained, desired: _DrainWord.idle, ordering: .releasing)
            .exchanged
    }

    @usableFromInline
    override func registryChanged() {
        stale.store(true, ordering: .releasing)
        // Only the delivering thread can find its own id here (it stored it itself).
        let delivering = deliveringThread.load(ordering: .relaxed)
        if delivering != 0 && delivering == _currentThreadID() { changedWhileDelivering = true }
    }
}

/// Whether the kit takes its paths with atomics where the OS has them (macOS 15, iOS 18 and
/// later; always on Linux and Windows). A build with `-DOBSERVERGRAPH_NO_ATOMICS` takes the paths
/// of older systems everywhere instead (locks only), so that they are tested on any platform;
/// it is for testing, not for apps.
#if OBSERVERGRAPH_NO_ATOMICS
    @inlinable var _usesAtomics: Bool { false }
#else
    @inlinable var _usesAtomics: Bool { true }
#endif

/// The values of `_MembershipWatch.drain`.
@usableFromInline
enum _DrainWord {
    @inlinable static var idle: UInt8 { 0 }
    @inlinable static var drained: UInt8 { 1 }
    @inlinable static var queued: UInt8 { 2 }
}

extension GraphEventSource {
    /// `_deliver` where the OS has atomics: no critical section of the node unless its
    /// observers changed since the last delivery.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @inlinable
    final func _deliverWatched(
        _ event: GraphEvent<Value>, upTo sequence: UInt64, drainer: ObjectIdentifier?, watch: _MembershipWatch
    ) {
        watch.changedWhileDelivering = false
        let thread = _currentThreadID()
        watch.deliveringThread.store(thread, ordering: .relaxed)
        defer { watch.deliveringThread.store(0, ordering: .relaxed) }
        let node = graphNode
        // A plain load first: the usual answer, no change, costs no atomic read-modify-write.
        if watch.stale.load(ordering: .acquiring),
            watch.stale.exchange(false, ordering: .acquiringAndReleasing)
        {
            // A change after this read sets `stale` again, for the next delivery.
            let (slots, layout) = node._observerSlots()
            var dead: [_DeadEntry] = []
            _roster.read(slots, generation: 0, dead: &dead)
            if !dead.isEmpty { node._dropDead(dead, layout: layout, count: slots.count) }
        }
        guard case .value(let value) = event else {
            // A terminal event takes an actor's lock path (`_deliverOnActor`), through its sink.
            _forEachObserver(upTo: sequence, drainer: nil, watch: watch) {
                $0.deliver(event, sink: $1, thread: thread)
            } callActorGate: { _, _ in
                false
            } callSink: {
                $0._deliverOutOfLine(event, drainer: drainer, thread: thread)
            }
            return
        }
        // Picked out of the event once, for every closure (see `_Handler.call(_:value:)`). A
        // trivial value is copied for free: no need for the call out of line.
        guard _isPOD(Value.self) else {
            _deliverValue(event, value, upTo: sequence, drainer: drainer, thread: thread, watch: watch)
            return
        }
        _forEachObserver(upTo: sequence, drainer: drainer, watch: watch) {
            $0.deliver(event, value: value, sink: $1, thread: thread)
        } callActorGate: {
            $0.callIfIdle(event, value: value, sink: $1)
        } callSink: {
            $0._deliverOutOfLine(event, drainer: drainer, thread: thread)
        }
    }

    /// The loop of `_deliverWatched` for a value event. Out of line on purpose: `value` arrives
    /// as an argument, so that the closures are handed it as it is (see
    /// `_Handler.call(_:value:)`).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @inlinable @inline(never)
    final func _deliverValue(
        _ event: GraphEvent<Value>, _ value: Value, upTo sequence: UInt64, drainer: ObjectIdentifier?,
        thread: UInt, watch: _MembershipWatch
    ) {
        _forEachObserver(upTo: sequence, drainer: drainer, watch: watch) {
            $0.deliver(event, value: value, sink: $1, thread: thread)
        } callActorGate: {
            $0.callIfIdle(event, value: value, sink: $1)
        } callSink: {
            $0._deliverOutOfLine(event, drainer: drainer, thread: thread)
        }
    }

    /// Delivers `event` to each closure observer that joined before `sequence`: a nonisolated
    /// one through its call gate, with `callGate`; an actor's one, when `drainer` is that actor,
    /// through its actor gate, with `callActorGate` (which answers `false` when the gate is not
    /// idle); the others, and those, through their sink, with `callSink` (out of line: the
    /// mailbox and queue paths would make every delivery's frame larger).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @inlinable @inline(__always)
    final func _forEachObserver(
        upTo sequence: UInt64, drainer: ObjectIdentifier?, watch: _MembershipWatch,
        _ callGate: (_CallGate<Value>, Unmanaged<_EventSink<Value>>) -> Void,
        callActorGate: (_ActorGate<Value>, _EventSink<Value>) -> Bool,
        callSink: (_EventSink<Value>) -> Void
    ) {
        let node = graphNode
        // The roster keeps the sinks alive for the whole loop: only the drainer replaces it,
        // and a closure never makes this thread drain this source again (it queues). Its
        // entries are read through a plain pointer: no reference count per delivery.
        for entry in _roster.entries {
            if watch.changedWhileDelivering && !node._isSubscribed(bits: entry.bits) { continue }
            guard entry.firstSequence < sequence else { continue }
            guard let gate = entry.gate else {
                entry.sink._withUnsafeGuaranteedRef { callSink($0) }
                continue
            }
            guard let actor = entry.actor else {
                // A nonisolated closure: straight to its call gate (what `deliver` does).
                gate._withUnsafeGuaranteedRef {
                    callGate(unsafeDowncast($0, to: _CallGate<Value>.self), entry.sink)
                }
                continue
            }
            // An actor's closure, on its actor and idle, is called at once (what
            // `_deliverOnActor` does first); otherwise its sink takes the event.
            if actor == drainer,
                gate._withUnsafeGuaranteedRef({ gate in
                    entry.sink._withUnsafeGuaranteedRef {
                        callActorGate(unsafeDowncast(gate, to: _ActorGate<Value>.self), $0)
                    }
                })
            {
                continue
            }
            entry.sink._withUnsafeGuaranteedRef { callSink($0) }
        }
    }
}
