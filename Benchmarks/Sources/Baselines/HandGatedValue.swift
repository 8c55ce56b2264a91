// Hand-written baselines shared by the benchmarks and the profiling executable, so that both
// measure the same code.

import ObserverGraph
import Synchronization

/// A locked value whose closures each sit behind an atomic gate that a call enters and leaves:
/// the least a closure observer whose `cancel()` is exact (no call after it returns) costs per
/// call. Closures are called in order after unlocking.
public final class HandGatedValue: @unchecked Sendable {
    @usableFromInline let state:
        GraphLock<(value: Int, handlers: [@Sendable (Int) -> Void], gates: [CallGateWord])>

    public init(_ value: Int = 0) {
        state = GraphLock((value, [], []))
    }

    public func observe(_ handler: @escaping @Sendable (Int) -> Void) {
        state.withLock { state in
            state.handlers.append(handler)
            state.gates.append(CallGateWord())
        }
    }

    @inlinable
    public func set(_ value: Int) {
        let (handlers, gates) = state.withLock { state in
            state.value = value
            return (state.handlers, state.gates)
        }
        for index in handlers.indices where gates[index].enter() {
            handlers[index](value)
            gates[index].leave()
        }
    }
}

/// The atomic word a call enters (0 to 2) and leaves (2 to 0); a canceller would set it to 1
/// (closed) or wait for the call inside.
public final class CallGateWord: Sendable {
    @usableFromInline let word = Atomic<UInt>(0)

    public init() {}

    @inlinable
    public func enter() -> Bool {
        word.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged
    }

    @inlinable
    public func leave() {
        _ = word.compareExchange(expected: 2, desired: 0, ordering: .acquiringAndReleasing)
    }
}
