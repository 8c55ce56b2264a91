// The event source inside a derived value, and how a node hands it what it emitted in a pass.

extension _OperatorNode {
    /// Delivers what this node emitted during the pass to the derived value's observers;
    /// nothing once the derived value is gone (`detachAll` ran).
    @inlinable
    func publish() {
        // Taken out (moved, not copied); released after unlocking, even when not delivered.
        let (outbox, live) = links.withLock { links -> (_Outbox<Value>, Bool) in
            var taken = _Outbox<Value>()
            swap(&taken, &links.outbox)
            return (taken, !links.released)
        }
        // Held by this node until its deinit: no reference to count.
        if live, let publisher { publisher._withUnsafeGuaranteedRef { $0.publish(outbox) } }
    }
}

/// The event source inside a `DerivedValue`: its observers, its replayed value, its delivery
/// queue. Fed only by propagation passes.
@usableFromInline
final class _DerivedSource<Value: Sendable>: GraphEventSource<Value>, @unchecked Sendable {
    @usableFromInline let replays: Bool

    init(current: Value?, terminal: GraphEvent<Value>?, replays: Bool) {
        self.replays = replays
        super.init(current: replays ? current : nil)
        pipeline.withLock { $0.terminal = terminal }
    }

    /// Takes the value and terminal event its node reached while it was not publishing (nobody
    /// observed it). Called under the node's lock; returns the replaced value, to be released
    /// after unlocking.
    func catchUp(latest: Value?, terminal: GraphEvent<Value>?) -> Value? {
        pipeline.withLock { state -> Value? in
            var replaced: Value?
            if replays, let latest {
                replaced = state.current
                state.current = latest
                state.version &+= 1
            }
            if state.terminal == nil, let terminal { state.terminal = terminal }
            return replaced
        }
    }

    /// Queues the events of `outbox` for the observers (values replace the current value when
    /// it replays), then delivers them unless another thread is delivering. When nobody is
    /// delivering, the first value is not queued: this caller delivers it directly (see
    /// `_SourceState.claimOrQueue`). Replaced values are released after unlocking.
    @inlinable
    func publish(_ outbox: _Outbox<Value>) {
        let (mustDrain, replaced, claimed) = pipeline.withLock {
            state -> (Bool, _Replaced<Value>, (event: GraphEvent<Value>, sequence: UInt64)?) in
            // Plain locals and a static helper: a local `var` captured by a closure or nested
            // function is checked for exclusive access on every use at run time.
            var mustDrain = false
            var replaced = _Replaced<Value>()
            var claimed: (event: GraphEvent<Value>, sequence: UInt64)?
            if let first = outbox.first {
                Self.take(
                    first, into: &state, replays: replays, mustDrain: &mustDrain, replaced: &replaced,
                    mayClaim: true, claimed: &claimed)
            }
            for event in outbox.more {
                Self.take(
                    event, into: &state, replays: replays, mustDrain: &mustDrain, replaced: &replaced,
                    mayClaim: false, claimed: &claimed)
            }
            return (mustDrain, replaced, claimed)
        }
        withExtendedLifetime(replaced) {}
        if let claimed {
            _deliverClaimed(claimed.event, upTo: claimed.sequence, drainer: nil)
        } else if mustDrain {
            _drainQueue(nil)  // started by `enqueue`: something is queued
        }
    }

    /// Queues one event of an outbox (see `publish`).
    /// `mayClaim` (the first event only): a value is claimed into `claimed` instead of queued
    /// when nobody is delivering.
    @inlinable
    static func take(
        _ event: GraphEvent<Value>, into state: inout _SourceState<Value>, replays: Bool,
        mustDrain: inout Bool, replaced: inout _Replaced<Value>, mayClaim: Bool,
        claimed: inout (event: GraphEvent<Value>, sequence: UInt64)?
    ) {
        guard state.terminal == nil else { return }
        switch event {
        case .value(let value):
            if replays {
                if replaced.first == nil {
                    replaced.first = state.current
                } else if let old = state.current {
                    replaced.more.append(old)
                }
                state.current = value
                state.version &+= 1
            }
            let sequence = state.takeSequence()
            if mayClaim {
                // The first event: delivered by this caller if nobody drains, else queued.
                if state.claimOrQueue(event, sequence: sequence) {
                    claimed = (event, sequence)
                    mustDrain = true
                }
                return
            }
            mustDrain = state.enqueue(.broadcast(event, sequence: sequence)) || mustDrain
        case .finished, .failed:
            state.terminal = event
            let sequence = state.takeSequence()
            mustDrain = state.enqueue(.terminate(event, sequence: sequence)) || mustDrain
        }
    }
}

/// The values a publish replaced, released after unlocking.
@usableFromInline
struct _Replaced<Value> {
    @usableFromInline var first: Value?
    @usableFromInline var more: [Value] = []

    @inlinable init() {}
}

/// The events a node emitted during a pass, for its observers: the first one apart, so that the
/// usual single event needs no array.
@usableFromInline
struct _Outbox<Value: Sendable> {
    @usableFromInline var first: GraphEvent<Value>?
    @usableFromInline var more: [GraphEvent<Value>] = []

    @inlinable init() {}

    @inlinable var isEmpty: Bool { first == nil }

    @inlinable
    mutating func append(_ event: GraphEvent<Value>) {
        if first == nil { first = event } else { more.append(event) }
    }
}
