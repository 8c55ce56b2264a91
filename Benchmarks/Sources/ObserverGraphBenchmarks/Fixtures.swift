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

/// The churn floor of a tracking edge's second side (`Churn.nodeFloor`): a plain observer
/// that owns, allocated right after it as a tracker's node is, a lock in an object of a node's
/// size (on Linux a `GraphLock` with 88 bytes of state is one 112-byte object, as a `GraphNode`
/// is). Taking that lock before a plain subscribe or unsubscribe costs what reaching a
/// tracker's node costs the kit: a fetch that waits for the observer's own, which holds the
/// node's address.
final class NodeFloorObs: GraphObserver {
    let node = GraphLock(NodeSizedState())
    private(set) var total = 0

    func receive(_ value: Int) { total &+= value }
}

/// 88 bytes of state: a count of edges and padding up to a node's size.
struct NodeSizedState {
    var edges = 0
    var padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
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

    /// `remove`, answering as the kit's removal does: `true` only if the entry under the
    /// observer's address is this very observer, alive. The entry of an observer that was
    /// deallocated while subscribed stays under its address, and a new object can be allocated
    /// there: `remove` reports that stale entry as a removal; this loads the weak reference to
    /// tell them apart (a strong reference taken and dropped: two atomic operations on the
    /// observer's side table), and drops the stale entry either way.
    func removeChecked(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { entries in
            guard let index = entries.index(forKey: key) else { return false }
            let live = entries.values[index].object === observer
            entries.remove(at: index)
            return live
        }
    }
}

/// An observer of `HandTrackingRegistry`: it lists its subscriptions, behind a lock of its own,
/// as a hand-written tracking observer would (the kit's tracking observers have their node).
final class HandTrackingObs: @unchecked Sendable {
    /// The registries this observer is in: each one's identity and a weak reference to it.
    let subscriptions = GraphLock<[WeakRegistry]>([])

    var subscriptionCount: Int { subscriptions.withLock { $0.count } }
}

/// One entry of a `HandTrackingObs`'s list: the registry's identity, so that removing it needs
/// no weak load, and a weak reference to it, so that the list can be read.
struct WeakRegistry {
    let key: ObjectIdentifier
    weak var object: HandTrackingRegistry?
}

/// One entry of a `HandTrackingRegistry`.
struct WeakTracker {
    weak var object: HandTrackingObs?
}

/// `HandRegistry` with a tracking side: each edge is also recorded in the observer's own list,
/// in the same critical section (the registry's lock, then the observer's), as the kit records
/// a tracking edge. What it costs over `HandRegistry` is what recording an edge on both sides
/// costs a hand-written registry, to compare with the kit's tracking minus plain.
final class HandTrackingRegistry: @unchecked Sendable {
    private let storage = GraphLock<[ObjectIdentifier: WeakTracker]>([:])

    /// Adds `observer` unless it is already there; both sides in one critical section.
    func add(_ observer: HandTrackingObs) -> Bool {
        let key = ObjectIdentifier(observer)
        let me = ObjectIdentifier(self)
        return storage.withLock { entries in
            if entries[key]?.object != nil { return false }
            entries[key] = WeakTracker(object: observer)
            observer.subscriptions.withLock { $0.append(WeakRegistry(key: me, object: self)) }
            return true
        }
    }

    /// Removes `observer` from both sides in one critical section.
    func remove(_ observer: HandTrackingObs) -> Bool {
        let key = ObjectIdentifier(observer)
        let me = ObjectIdentifier(self)
        return storage.withLock { entries in
            guard entries.removeValue(forKey: key) != nil else { return false }
            observer.subscriptions.withLock { list in
                if let index = list.firstIndex(where: { $0.key == me }) { list.remove(at: index) }
            }
            return true
        }
    }
}
