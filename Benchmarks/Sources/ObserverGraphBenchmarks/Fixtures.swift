// The objects every scenario works with. All implementations of a scenario deliver to, subscribe
// and look up the SAME observer objects, so that they pay the same memory layout and the same
// cache behaviour, and differ only in their own machinery.

import ObserverGraph

/// An observable of the kit: the one stored property the kit asks for.
final class Subject: GraphObservable, Sendable {
    let graphNode = GraphNode()
}

/// A plain observer (held weakly by the kit; a class needs no code to conform).
///
/// `receive` is the work every fan-out implementation does per delivery: a tiny side effect on
/// the observer that the optimizer cannot remove, because the totals are read back and checked.
final class Obs: GraphObserver {
    private(set) var total = 0

    func receive(_ value: Int) { total &+= value }
}

/// A tracking observer: it knows its subscriptions, so each edge is recorded on both sides.
final class TrackingObs: GraphTrackingObserver {
    let graphNode = GraphNode()
    private(set) var total = 0

    func receive(_ value: Int) { total &+= value }
}

/// One entry of the hand-written non-owning loop: a weak reference, nothing else.
struct Weak {
    weak var object: Obs?
}

/// An immutable observer for the threaded scenario: its deliveries only read `weight`, so two
/// threads may deliver to it at once without a data race.
final class SharedObs: GraphObserver, Sendable {
    let weight: Int

    init(weight: Int) { self.weight = weight }
}

/// An immutable tracking observer for the threaded scenario.
final class SharedTrackingObs: GraphTrackingObserver, Sendable {
    let graphNode = GraphNode()
    let weight: Int

    init(weight: Int) { self.weight = weight }
}

/// Carries a value that is not `Sendable` (an OpenCombine subject) into the threads of the
/// contention scenario. The peers document their subjects as thread-safe.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}

/// Sum of the observers' totals, to check that a measurement made every delivery it claims.
func totalOf(_ observers: [Obs]) -> Int {
    observers.reduce(0) { $0 &+ $1.total }
}

/// Short labels for sizes in scenario names: 1k, 100k, 1M.
func sizeLabel(_ n: Int) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
    if n >= 1_000 && n % 1_000 == 0 { return "\(n / 1_000)k" }
    return "\(n)"
}

/// The registry a user could write by hand with the kit's lock: object identity to a weak
/// reference in a dictionary behind one `GraphLock`. No order, no callbacks, no tracking side,
/// no duplicate-safe reuse of a dead object's address beyond a weak check: the floor for a
/// locked registry of weakly held observers, run on the same observer objects as the kit.
final class HandRegistry: @unchecked Sendable {
    private let storage = GraphLock<[ObjectIdentifier: Weak]>([:])

    /// Adds `observer` unless it is already there (checked and inserted in one critical section).
    func add(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { entries in
            if entries[key]?.object != nil { return false }
            entries[key] = Weak(object: observer)
            return true
        }
    }

    func remove(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { $0.removeValue(forKey: key) != nil }
    }

    func contains(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { $0[key]?.object != nil }
    }
}
