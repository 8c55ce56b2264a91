/// A source's own list of its closure observers, in registration order: what a delivery loops
/// over instead of the node's weak slots.
///
/// The node's registry holds every observer weakly, so looping over it costs a weak load and a
/// release per observer per event (and an object referenced weakly pays the slow path of every
/// retain and release). The roster holds the sinks strongly and lists them unretained, so a
/// delivery touches no reference count per observer. It is read again from the node whenever
/// the node's membership generation changed (an observer joined or left, by any path:
/// `cancel()`, `removeObserver`, `removeAllObservers`, a sweep), so it never lists an observer
/// the node no longer has, nor misses one it has, at the start of a delivery.
///
/// Holding the sinks strongly keeps a cancelled sink (an empty shell: its closure and its actor
/// are released by `cancel()`) alive until the next delivery reads the node again.
///
/// Thread safety: not synchronized; only the source's delivering thread touches it.
@usableFromInline
struct _SinkRoster<Value: Sendable> {
    /// The node's membership generation the roster was read at; `nil` before the first read.
    @usableFromInline var generation: UInt?
    /// Keeps the sinks listed in `entries` alive.
    @usableFromInline var owners: ContiguousArray<_EventSink<Value>> = []
    /// The sinks, unretained (`owners` keeps them), with their registry bits, in storage the
    /// roster allocates and frees (`read`, `clear`; the source's deinit clears it if a delivery
    /// read it): a delivery loops over them through a plain pointer, where an array would count
    /// a reference on its buffer for every delivery.
    @usableFromInline var entries = UnsafeMutableBufferPointer<_RosterEntry<Value>>(start: nil, count: 0)

    @inlinable init() {}

    /// Reads the closure observers from the node's `slots` (taken at `generation`); entries
    /// whose object is gone go to `dead`, for the node to drop.
    /// - Complexity: O(n), n = number of slots.
    @inlinable
    mutating func read(_ slots: ContiguousArray<_Slot>, generation: UInt, dead: inout [_DeadEntry]) {
        var owners = ContiguousArray<_EventSink<Value>>()
        var entries = ContiguousArray<_RosterEntry<Value>>()
        owners.reserveCapacity(slots.count)
        entries.reserveCapacity(slots.count)
        for position in slots.indices {
            let bits = slots[position].bits
            if bits == 0 { continue }
            guard let object = slots[position].loadObject() else {
                dead.append(_DeadEntry(position: position, bits: bits))
                continue
            }
            // Other observers (added with `addObserver`, or boxed structs) get no events.
            guard bits & _SlotFlags.boxed == 0, let sink = object as? _EventSink<Value> else { continue }
            entries.append(_RosterEntry(sink, bits: bits))
            owners.append(sink)
        }
        let storage = UnsafeMutableBufferPointer<_RosterEntry<Value>>.allocate(capacity: entries.count)
        _ = storage.initialize(fromContentsOf: entries)
        self.entries.deallocate()  // trivial entries: nothing to deinitialize
        self.entries = storage
        self.generation = generation
        self.owners = owners  // the sinks of the previous read are released here, no lock held
    }

    /// Empties the roster and frees its entries' storage.
    @inlinable
    mutating func clear() {
        entries.deallocate()
        entries = UnsafeMutableBufferPointer(start: nil, count: 0)
        generation = nil
        owners = []
    }
}

/// One closure observer of a roster: unretained (the roster's `owners` keeps it), its registry
/// bits (to re-check it after a removal made during the delivery), and what a delivery to it
/// reads first, copied out of the sink so that the loop goes from the entry straight to the
/// closure's call gate: the sequence number it joined at and the gate (which the sink keeps until
/// its deinit): for a nonisolated sink, its call gate; for an actor's sink, its actor gate, with
/// the actor's identity, so that a value delivered on that actor calls the closure from the loop.
@usableFromInline
struct _RosterEntry<Value: Sendable> {
    @usableFromInline let sink: Unmanaged<_EventSink<Value>>
    @usableFromInline let bits: UInt64
    @usableFromInline let firstSequence: UInt64
    /// The sink's `_gate` (a `_CallGate<Value>`) when `actor` is `nil`, its `_actorGate` (an
    /// `_ActorGate<Value>`) otherwise; unretained; `nil` for the other modes.
    @usableFromInline let gate: Unmanaged<AnyObject>?
    /// The sink's `actorIdentity` when it has an actor gate; `nil` otherwise.
    @usableFromInline let actor: ObjectIdentifier?

    @inlinable init(_ sink: _EventSink<Value>, bits: UInt64) {
        self.sink = Unmanaged.passUnretained(sink)
        self.bits = bits
        self.firstSequence = sink.firstSequence
        if let actorGate = sink._actorGate {
            self.gate = actorGate
            self.actor = sink.actorIdentity
        } else {
            self.gate = sink._gate
            self.actor = nil
        }
    }
}
