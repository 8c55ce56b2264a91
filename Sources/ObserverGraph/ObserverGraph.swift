// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The ObserverGraph authors. MIT License: the full text is in the package's LICENSE file.
// ObserverGraph.swift
//
// The core of ObserverGraph, in ONE file. Copy this file into any Swift 6 target and it compiles
// alone: it needs only the Swift standard library and the platform's C library (for a lock).
//
// What it gives you: the subscription graph between observables and observers, kept consistent,
// thread-safe and leak-free, with the optional callbacks and a typed broadcast. It carries no
// messages: what you tell your observers is up to you (see `GraphObservable.broadcast(as:_:)`).
//
// Guarantees (each one is tested in the package's test suite):
// - Consistency: a tracking observer T lists an observable O in `subscriptions` exactly when O
//   lists T in `observers`. Each edge is added and removed on both sides inside one critical
//   section holding both nodes' locks. No duplicates, ever.
// - Exactly-once callbacks: every successful subscribe fires `didSubscribe(to:)` and
//   `observer(_:didSubscribe: true)` once; every successful removal fires `didUnsubscribe(from:)`
//   and `observer(_:didSubscribe: false)` once. A refused call returns `nil` (or `false`) and fires
//   nothing. An edge that disappears because one side was deallocated fires nothing: there is no
//   instance left to hand to a callback.
// - Callback order: an observable's callbacks (its own and its observers' for its edges) arrive
//   in the order its changes took effect, one at a time. A change made while they are being
//   delivered (from inside a callback, or on another thread) is queued, and its callbacks run
//   after the running callback returns, on the delivering thread (which delivers until none is
//   queued); its call returns at once. So an observer that leaves inside its
//   `didSubscribe(to:)` is reported joined, then left.
// - Thread safety: every operation may be called from any thread. No user code (callbacks,
//   broadcast bodies, deinit of your objects) ever runs while the kit holds a lock.
// - Reentrancy: callbacks and broadcast bodies may subscribe, unsubscribe and broadcast again.
//   A broadcast delivers to the observers subscribed when it starts, in registration order.
//   Observers added during a broadcast are not called by it. An observer removed on the
//   broadcasting thread during a broadcast (by a body or a callback) is not called by it after
//   the removal returns. A removal made on another thread takes effect for every broadcast that
//   starts after it returns; a broadcast already running elsewhere may still make its call.
// - Ownership: observables hold class observers weakly and never keep them alive; a deallocated
//   observer is never called and is pruned. A tracking observer and its observables hold each
//   other weakly, so no pairing forms a retain cycle; when either side is deallocated, its edges
//   are removed from the other side at once. Struct observers are values: the observable keeps a
//   copy until they are unsubscribed.
// - Complexity: subscribe, unsubscribe and the "is subscribed" queries are expected O(1) (a hash
//   index, no scans); a broadcast is O(observers) and allocates nothing per observer.

#if canImport(Darwin)
    import Darwin
#elseif os(Windows)
    import WinSDK
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#else
    #error("ObserverGraph needs a platform lock: Darwin, Glibc, Musl, Android or Windows.")
#endif

// MARK: - Lock

#if canImport(Darwin)
    @usableFromInline typealias _GraphLockPrimitive = os_unfair_lock
#elseif os(Windows)
    @usableFromInline typealias _GraphLockPrimitive = SRWLOCK
#else
    @usableFromInline typealias _GraphLockPrimitive = pthread_mutex_t
#endif

/// Storage of a `GraphLock`: the protected state and the lock in one allocation.
@usableFromInline
final class _GraphLockBuffer<State>: ManagedBuffer<State, _GraphLockPrimitive> {
    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin) || os(Windows)
                _ = lock.deinitialize(count: 1)
            #else
                _ = pthread_mutex_destroy(lock)
            #endif
        }
    }
}

@inlinable @inline(__always)
func _graphLock(_ lock: UnsafeMutablePointer<_GraphLockPrimitive>) {
    #if canImport(Darwin)
        os_unfair_lock_lock(lock)
    #elseif os(Windows)
        AcquireSRWLockExclusive(lock)
    #else
        _ = pthread_mutex_lock(lock)
    #endif
}

@inlinable @inline(__always)
func _graphUnlock(_ lock: UnsafeMutablePointer<_GraphLockPrimitive>) {
    #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
    #elseif os(Windows)
        ReleaseSRWLockExclusive(lock)
    #else
        _ = pthread_mutex_unlock(lock)
    #endif
}

/// A value protected by a lock: the one lock type every layer of ObserverGraph uses.
///
/// Copies of a `GraphLock` share the same state and the same lock. The lock is not recursive:
/// do not call `withLock` on the same lock from inside its body, and do not call code you do not
/// control (callbacks, closures, `deinit` of your objects) from inside the body.
///
/// Thread safety: `withLock` may be called from any thread; bodies run one at a time.
/// Callbacks: none.
/// - Complexity: O(1) plus the cost of the body.
public struct GraphLock<State> {
    @usableFromInline let _buffer: _GraphLockBuffer<State>

    /// Creates a lock protecting `initialState`.
    ///
    /// Thread safety: the new lock may be shared with any thread.
    /// Callbacks: none.
    /// - Complexity: O(1); one allocation.
    public init(_ initialState: State) {
        let buffer = _GraphLockBuffer<State>.create(minimumCapacity: 1) { _ in initialState }
        _buffer = unsafeDowncast(buffer, to: _GraphLockBuffer<State>.self)
        _buffer.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock())
            #elseif os(Windows)
                InitializeSRWLock(lock)
            #else
                // Default attributes: a plain, non-recursive mutex. It cannot fail with them.
                _ = pthread_mutex_init(lock, nil)
            #endif
        }
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    ///
    /// Thread safety: safe from any thread; callers are serialized.
    /// Callbacks: none besides `body`, which runs under the lock: keep it short and do not call
    /// out of it.
    /// - Complexity: O(1) plus the cost of `body`.
    @inlinable
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try _buffer.withUnsafeMutablePointers { state, lock in
            _graphLock(lock)
            defer { _graphUnlock(lock) }
            return try body(&state.pointee)
        }
    }
}

extension GraphLock: @unchecked Sendable where State: Sendable {}

extension GraphLock {
    /// Takes the lock without a scope: for holding many locks at once (in a fixed order). Every
    /// call must be paired with `_unlockUnscoped()` on the same thread.
    func _lockUnscoped() {
        _buffer.withUnsafeMutablePointerToElements { _graphLock($0) }
    }

    /// Releases a lock taken with `_lockUnscoped()`.
    func _unlockUnscoped() {
        _buffer.withUnsafeMutablePointerToElements { _graphUnlock($0) }
    }

    /// A copy of the state; only while holding the lock.
    var _stateWhileLocked: State {
        _buffer.withUnsafeMutablePointerToHeader { $0.pointee }
    }
}

/// An opaque number identifying the calling thread, for reentrancy bookkeeping.
@usableFromInline
func _currentThreadID() -> UInt {
    #if os(Windows)
        return UInt(GetCurrentThreadId())
    #elseif canImport(Darwin)
        return UInt(bitPattern: pthread_self())
    #elseif canImport(Musl)
        return UInt(bitPattern: Int(bitPattern: pthread_self()))
    #elseif canImport(Android)
        return UInt(bitPattern: pthread_self())
    #else
        return UInt(pthread_self())
    #endif
}

// MARK: - Identity

/// The identity of an observer in the graph.
///
/// A class observer gets one for free (its object identity); a struct observer stores one:
/// `let observerID = ObserverID()` creates a fresh, never-repeated identity. Two observers with
/// the same `ObserverID` are the same observer to every observable.
///
/// Thread safety: a value type; `Sendable`.
/// Callbacks: none.
/// - Complexity: O(1) for creation, hashing and comparison.
public struct ObserverID: Hashable, Sendable, CustomStringConvertible {
    // Object identities are addresses (8-byte aligned: low three bits zero). Generated identities
    // are odd, so the two kinds never collide. Bits 1 and 2 stay zero in both: slots use them as
    // flags.
    @usableFromInline let _raw: UInt

    @inlinable init(_raw: UInt) { self._raw = _raw }

    /// Creates a new identity, different from every other identity in this process.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: none.
    /// - Complexity: O(1).
    public init() {
        _raw = _ObserverIDSource.counter.withLock { counter in
            counter &+= 1
            return (counter << 3) | 1
        }
    }

    /// The identity of `object`, valid for as long as `object` is alive.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init(_ object: AnyObject) {
        _raw = UInt(bitPattern: ObjectIdentifier(object))
    }

    /// A short hexadecimal rendering, for logs and diagrams.
    ///
    /// Thread safety: a pure function of the value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        "ObserverID(0x" + String(_raw, radix: 16) + ")"
    }
}

/// Which classes are tracking observers (for `_graphTrackingNodeOrCast`): a small direct-mapped
/// table; a collision only costs a recheck.
enum _TrackingClassCache {
    private static let table = GraphLock<[UInt]>(Array(repeating: 0, count: 128))

    /// `true` or `false` if `type` was seen, `nil` if not (or evicted).
    static func lookup(_ type: UInt) -> Bool? {
        let entry = table.withLock { $0[slot(type)] }
        guard entry & ~1 == type & ~1, entry != 0 else { return nil }
        return entry & 1 == 1
    }

    static func store(_ type: UInt, _ tracking: Bool) {
        let entry = (type & ~1) | (tracking ? 1 : 0)
        table.withLock { $0[slot(type)] = entry }
    }

    private static func slot(_ type: UInt) -> Int {
        Int(truncatingIfNeeded: (type >> 4) ^ (type >> 11)) & 127
    }
}

enum _ObserverIDSource {
    static let counter = GraphLock<UInt>(0)
}

// MARK: - Protocols

/// Something that can be subscribed to a `GraphObservable`: a class or a struct.
///
/// A class conforms with no code at all. A struct stores its identity:
///
///     struct PrintingObserver: GraphObserver {
///         let observerID = ObserverID()
///     }
///
/// Everything else has a default. The callbacks are optional.
///
/// Thread safety: the kit calls the callbacks on the thread that made the change, or on the
/// thread delivering the observable's earlier callbacks at that moment (see "Callback order" in
/// the file header). If you change subscriptions from several threads, make your callbacks safe
/// to call from them.
public protocol GraphObserver {
    /// The identity observables use to tell this observer from others.
    ///
    /// Classes get object identity by default; tracking observers are identified by their node.
    /// A struct must store one (`let observerID = ObserverID()`), so that copies of it are the
    /// same observer. It must not change while the observer is subscribed.
    var observerID: ObserverID { get }

    /// Called once after this observer was subscribed to `observable`.
    ///
    /// Runs with no lock held, after the callbacks of earlier changes of `observable`; it may
    /// subscribe, unsubscribe or broadcast. A change it makes to `observable`'s edges is reported
    /// after it (and the observable's `observer(_:didSubscribe: true)`) returned.
    func didSubscribe(to observable: any GraphObservable)

    /// Called once after this observer was removed from `observable` by `unsubscribe`, or by
    /// `removeAllObservers` / `unsubscribeFromAll`.
    ///
    /// Runs with no lock held, in the order `observable`'s changes took effect (as
    /// `didSubscribe(to:)`). Not called when the edge disappears because `observable` was
    /// deallocated.
    func didUnsubscribe(from observable: any GraphObservable)

    /// A name for this observer in diagrams, graph exports and logs.
    ///
    /// Default: the type name and a short id, like `BalanceLabel@3fa2`. The short id is four hex
    /// digits derived from the identity: stable while the observer lives, but not unique (it is
    /// for display only). Implement it to give an observer a readable name. The kit calls it with
    /// no lock held; keep it cheap and free of side effects.
    var graphDisplayName: String { get }

    /// Plumbing: the node of a tracking observer, `nil` for other observers.
    ///
    /// Provided by the kit. Do not implement it.
    var _graphTrackingNode: GraphNode? { get }
}

/// Something observers subscribe to. A class that stores one `GraphNode`:
///
///     final class Wallet: GraphObservable {
///         let graphNode = GraphNode()
///     }
///
/// Everything else (`addObserver`, `removeObserver`, `observers`, `broadcast`, ...) has a default.
///
/// Thread safety: every default implementation is safe to call from any thread.
public protocol GraphObservable: AnyObject {
    /// The kit's storage for this object's edges. Store it as `let graphNode = GraphNode()`:
    /// one node per object, never replaced.
    var graphNode: GraphNode { get }

    /// Called once after `observer` was subscribed (`subscribed == true`) or removed
    /// (`subscribed == false`). Optional.
    ///
    /// Runs with no lock held, after the observer's own callback, in the order this observable's
    /// changes took effect (see "Callback order" in the file header). Not called when the edge
    /// disappears because the observer was deallocated.
    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool)

    /// A name for this observable in diagrams, graph exports and logs.
    ///
    /// Default: the type name and a short id of its node, like `Wallet@91c0` (see
    /// `GraphObserver.graphDisplayName`). An object that is observable and observer has one name.
    var graphDisplayName: String { get }
}

/// An observer (a class) that also knows every observable it is subscribed to.
///
///     final class QueueWatcher: GraphTrackingObserver {
///         let graphNode = GraphNode()
///     }
///
/// A class can be a `GraphObservable` and a `GraphTrackingObserver` at once; both use the same
/// `graphNode`.
///
/// Thread safety: every default implementation is safe to call from any thread.
public protocol GraphTrackingObserver: GraphObserver, AnyObject {
    /// The kit's storage for this object's edges. Store it as `let graphNode = GraphNode()`.
    var graphNode: GraphNode { get }
}

// MARK: - Defaults: observer

extension GraphObserver {
    /// Default: does nothing. Implement it to learn about new subscriptions.
    ///
    /// Thread safety: see `GraphObserver`. Callbacks: none.
    /// - Complexity: O(1).
    public func didSubscribe(to observable: any GraphObservable) {}

    /// Default: does nothing. Implement it to learn about removed subscriptions.
    ///
    /// Thread safety: see `GraphObserver`. Callbacks: none.
    /// - Complexity: O(1).
    public func didUnsubscribe(from observable: any GraphObservable) {}

    /// Default: `nil`, because a plain observer keeps no node. Exists so that the kit finds a
    /// tracking observer's node without a dynamic cast.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var _graphTrackingNode: GraphNode? { nil }

    /// Subscribes this observer to `observable`; the same as `observable.addObserver(self)`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: on success, `didSubscribe(to:)` then `observer(_:didSubscribe: true)`.
    /// - Returns: `true` if added, `false` if it was already subscribed (nothing fires).
    /// - Complexity: expected O(1).
    @discardableResult
    public func subscribe(to observable: any GraphObservable) -> Bool {
        observable.addObserver(self) != nil
    }

    /// Removes this observer from `observable`; the same as `observable.removeObserver(self)`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: on success, `didUnsubscribe(from:)` then `observer(_:didSubscribe: false)`.
    /// - Returns: `true` if removed, `false` if it was not subscribed (nothing fires).
    /// - Complexity: expected O(1).
    @discardableResult
    public func unsubscribe(from observable: any GraphObservable) -> Bool {
        observable.removeObserver(self) != nil
    }

    /// Whether this observer is subscribed to `observable` right now ("am I subscribed").
    ///
    /// Thread safety: safe from any thread; the answer may be stale as soon as it returns if
    /// other threads change the graph.
    /// Callbacks: none.
    /// - Complexity: expected O(1).
    public func isSubscribed(to observable: any GraphObservable) -> Bool {
        observable.hasObserver(self)
    }

    /// The node of this observer if it is a tracking observer. The protocol hook answers without
    /// a cast; the cast catches a subclass that adopted `GraphTrackingObserver` below a class
    /// that adopted `GraphObserver` (its hook is the base class's `nil`).
    var _graphTrackingNodeOrCast: GraphNode? {
        _graphTrackingNode(object: _graphObjectIfClass)
    }

    /// `_graphTrackingNodeOrCast` for a caller that already has `_graphObjectIfClass`.
    func _graphTrackingNode(object: AnyObject?) -> GraphNode? {
        if let node = _graphTrackingNode { return node }
        guard let object else { return nil }
        // The answer depends only on the class, so it is cached: a conformance check per call
        // would cost more than the whole subscribe.
        let type = UInt(bitPattern: ObjectIdentifier(Swift.type(of: object)))
        if _TrackingClassCache.lookup(type) == false { return nil }
        let tracker = object as? any GraphTrackingObserver
        _TrackingClassCache.store(type, tracker != nil)
        return tracker?.graphNode
    }

    /// This observer as an object reference when it is a class instance, without the bridging
    /// machinery that `as AnyObject` goes through in generic code; `nil` for a value type.
    var _graphObjectIfClass: AnyObject? {
        guard Self.self is AnyObject.Type else { return nil }
        return unsafeBitCast(self, to: AnyObject.self)
    }

    /// The key observables file this observer under: the node for tracking observers.
    var _graphEdgeKey: ObserverID {
        if let node = _graphTrackingNodeOrCast { return ObserverID(node) }
        return observerID
    }
}

extension GraphObserver where Self: AnyObject {
    /// Default: object identity. A class has one for free and needs no stored id.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var observerID: ObserverID { ObserverID(self) }
}

extension GraphObserver {
    /// Default: the type name and a short id of `observerID`, like `BalanceLabel@3fa2`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(length of the type name).
    public var graphDisplayName: String { _graphDefaultDisplayName(type(of: self), observerID) }
}

extension GraphObservable {
    /// Default: the type name and a short id of `graphNode`, like `Wallet@91c0`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(length of the type name).
    public var graphDisplayName: String { _graphDefaultDisplayName(type(of: self), ObserverID(graphNode)) }
}

extension GraphObservable where Self: GraphObserver {
    /// Default for an object that is observable and observer: the type name and a short id of
    /// `graphNode`, one name for both roles.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(length of the type name).
    public var graphDisplayName: String { _graphDefaultDisplayName(type(of: self), ObserverID(graphNode)) }
}

/// `TypeName@abcd`: the type name and the identity's short id.
func _graphDefaultDisplayName(_ type: Any.Type, _ id: ObserverID) -> String {
    String(describing: type) + "@" + id.shortID
}

extension ObserverID {
    /// Four hex digits mixed from the identity's bits, as in default display names
    /// (`Wallet@91c0`): stable for the identity, but not unique. For display only.
    ///
    /// Thread safety: a pure function of the value. Callbacks: none.
    /// - Complexity: O(1).
    public var shortID: String {
        var bits = UInt64(truncatingIfNeeded: _raw)
        bits = (bits ^ (bits >> 33)) &* 0xff51_afd7_ed55_8ccd
        bits ^= bits >> 33
        let hex = String(bits & 0xffff, radix: 16)
        return String(repeating: "0", count: 4 - hex.count) + hex
    }
}

extension GraphTrackingObserver {
    /// Default: the identity of `graphNode`, the key observables file this observer under.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var observerID: ObserverID { ObserverID(graphNode) }

    /// Default: `graphNode`, so that observables update this observer's subscription list.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var _graphTrackingNode: GraphNode? { graphNode }

    /// Every observable this observer is subscribed to, in subscription order.
    ///
    /// Thread safety: safe from any thread; a consistent snapshot taken under the node's lock.
    /// Callbacks: none.
    /// - Complexity: O(n), n = number of subscriptions.
    public var subscriptions: [any GraphObservable] {
        let slots = graphNode._state.withLock { $0.subscriptions.slots }
        var result: [any GraphObservable] = []
        result.reserveCapacity(slots.count)
        for slot in slots {
            if let object = slot.object { result.append(_graphObservable(object)) }
        }
        return result
    }

    /// How many observables this observer is subscribed to.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(n), n = number of subscriptions (deallocated observables are skipped).
    public var subscriptionCount: Int {
        let slots = graphNode._state.withLock { $0.subscriptions.slots }
        return slots.reduce(0) { $0 + ($1.object == nil ? 0 : 1) }
    }

    /// Removes this observer from every observable it is subscribed to.
    ///
    /// Each edge is removed atomically on both sides. Observables subscribed concurrently while
    /// this runs may remain.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: for each removed edge, in subscription order, `didUnsubscribe(from:)` then the
    /// observable's `observer(_:didSubscribe: false)`.
    /// - Returns: the observables it was removed from, in subscription order.
    /// - Complexity: O(n), n = number of subscriptions.
    @discardableResult
    public func unsubscribeFromAll() -> [any GraphObservable] {
        let live: [AnyObject] = graphNode._state.withLock { $0.subscriptions.liveObjects() }
        var removed: [any GraphObservable] = []
        for object in live {
            let observable = _graphObservable(object)
            if observable.removeObserver(self) != nil { removed.append(observable) }
        }
        return removed
    }
}

// MARK: - Defaults: observable

extension GraphObservable {
    /// Default: does nothing. Implement it to learn about observers joining and leaving.
    ///
    /// Thread safety: see `GraphObservable`. Callbacks: none.
    /// - Complexity: O(1).
    public func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {}

    /// Subscribes `observer`: it joins the end of the observer list.
    ///
    /// The check ("already subscribed?") and the insertion happen in one critical section. For a
    /// tracking observer, this observable joins its `subscriptions` in the same critical section.
    /// A class observer is held weakly; a struct observer is stored by value.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: on success, `observer.didSubscribe(to: self)` then
    /// `self.observer(observer, didSubscribe: true)`, once each, with no lock held, in the order
    /// this observable's changes took effect (see "Callback order" in the file header): before
    /// this returns, unless it was called from inside a callback of this observable or while
    /// another thread delivers them (then they follow the running callback).
    /// - Returns: `observer` if it was added; `nil` if it was already subscribed (nothing fires).
    /// - Complexity: expected O(1) (amortized; an occasional O(n) sweep drops deallocated
    ///   observers, and the first change made while a broadcast is running copies the list).
    @discardableResult
    public func addObserver<Observer: GraphObserver>(_ observer: Observer) -> Observer? {
        let (outcome, turn) = _insertObserver(observer, queueing: true)
        guard case .inserted(let sweepDue) = outcome else { return nil }
        if turn {
            observer.didSubscribe(to: self)
            self.observer(observer, didSubscribe: true)
            _deliverQueuedCallbacks()
        }
        if sweepDue { graphNode._sweepDeadObservers() }
        return observer
    }

    /// `subscribe` for the kit's own observers, whose callbacks are no-ops (the events layer calls
    /// it while holding a lock of its own): the callbacks fire at once, outside this observable's
    /// callback order, and the occasional sweep for deallocated observers is left to the caller,
    /// which must run it (after unlocking) when `sweepDue` is true: the sweep loads weak
    /// references, and releasing what it loaded may run a deinit.
    func _subscribeDeferringSweep<Observer: GraphObserver>(_ observer: Observer) -> (
        added: Bool, sweepDue: Bool
    ) {
        let (outcome, _) = _insertObserver(observer, queueing: false)
        guard case .inserted(let sweepDue) = outcome else { return (false, false) }
        observer.didSubscribe(to: self)
        self.observer(observer, didSubscribe: true)
        return (true, sweepDue)
    }

    /// Inserts the edge in one critical section. With `queueing`, the same critical section
    /// takes this observable's callback turn (`turn == true`: the caller fires the callbacks,
    /// then delivers what was queued meanwhile) or, when a delivery is running, queues them.
    func _insertObserver<Observer: GraphObserver>(_ observer: Observer, queueing: Bool) -> (
        outcome: _InsertOutcome, turn: Bool
    ) {
        let node = graphNode
        let instance = observer._graphObjectIfClass
        if let object = instance, let trackerNode = observer._graphTrackingNode(object: object) {
            let trackerKey = ObserverID(trackerNode)
            let selfKey = ObserverID(node)
            return GraphNode._withEdge(observable: node, tracker: trackerNode) {
                observers, subscriptions, callbacks in
                let outcome = observers.insert(
                    key: trackerKey, object: object, flags: _SlotFlags.tracking, box: nil)
                guard case .inserted = outcome else { return (outcome, false) }
                // Present here only if inconsistent, which the edge lock rules out; an entry
                // left by a deallocated object is replaced.
                _ = subscriptions.insert(key: selfKey, object: self, flags: 0, box: nil)
                guard queueing else { return (outcome, false) }
                return (outcome, callbacks.admit(observer, subscribed: true, removed: nil))
            }
        }
        let key = observer.observerID
        let object: AnyObject
        let box: _ValueObserverBox?
        if let instance {
            object = instance
            box = nil
        } else {
            let newBox = _ValueObserverBox(observer)
            object = newBox
            box = newBox
        }
        let flags = box == nil ? 0 : _SlotFlags.boxed
        return node._state.withLock { state in
            let outcome = state.observers.insert(key: key, object: object, flags: flags, box: box)
            guard case .inserted = outcome, queueing else { return (outcome, false) }
            return (outcome, state.callbacks.admit(observer, subscribed: true, removed: nil))
        }
    }

    /// Removes `observer`.
    ///
    /// For a tracking observer, this observable leaves its `subscriptions` in the same critical
    /// section.
    ///
    /// Thread safety: safe from any thread. See the file header for removals made while a
    /// broadcast runs.
    /// Callbacks: on success, `observer.didUnsubscribe(from: self)` then
    /// `self.observer(observer, didSubscribe: false)`, once each, with no lock held, in the order
    /// this observable's changes took effect (as for `addObserver(_:)`).
    /// - Returns: `observer` if it was removed; `nil` if it was not subscribed (nothing fires).
    /// - Complexity: expected O(1) (amortized).
    @discardableResult
    public func removeObserver<Observer: GraphObserver>(_ observer: Observer) -> Observer? {
        let trackerNode = observer._graphTrackingNodeOrCast
        let key = trackerNode == nil ? observer.observerID : ObserverID(_raw: 0)
        return _removeObserver(observer, trackerNode: trackerNode, key: key) ? observer : nil
    }

    /// Removes the edge to `observer`, filed under `trackerNode` for a tracking observer, else
    /// under `key`, and fires (or queues) its callbacks; `false` if it was not there. A caller
    /// `holdingTurn` keeps the turn (and gives it back itself, with `_deliverQueuedCallbacks`).
    func _removeObserver<Observer: GraphObserver>(
        _ observer: Observer, trackerNode: GraphNode?, key: ObserverID, holdingTurn: Bool = false
    ) -> Bool {
        let node = graphNode
        let removed: _Removed?
        let now: Bool
        if let trackerNode {
            (removed, now) = GraphNode._detachEdge(observable: node, tracker: trackerNode) {
                $1.admit(observer, subscribed: false, removed: $0, holdingTurn: holdingTurn)
            }
        } else {
            (removed, now) = node._state.withLock { state in
                guard let removed = state.observers.remove(key: key) else { return (nil, false) }
                let now = state.callbacks.admit(
                    observer, subscribed: false, removed: removed, holdingTurn: holdingTurn)
                return (removed, now)
            }
        }
        guard let removed else { return false }
        if now {
            observer.didUnsubscribe(from: self)
            self.observer(observer, didSubscribe: false)
            withExtendedLifetime(removed) {}  // released here, after the callbacks, with no lock held
            if !holdingTurn { _deliverQueuedCallbacks() }
        }
        return true
    }

    /// Removes every observer, one edge at a time, in registration order.
    ///
    /// Each removal is atomic (for a tracking observer, on both sides). Observers subscribed
    /// concurrently while this runs may remain.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: for each removed observer, in registration order, `didUnsubscribe(from:)` then
    /// `observer(_:didSubscribe: false)`, with no lock held, in the order this observable's
    /// changes took effect (as for `addObserver(_:)`).
    /// - Returns: the removed observers, in registration order.
    /// - Complexity: O(n), n = number of observers.
    @discardableResult
    public func removeAllObservers() -> [any GraphObserver] {
        // Holds the callback turn for the whole loop when it is free, so that each removal does
        // not take and give it back; a change queued meanwhile is delivered in order at the end.
        let (slots, turn) = graphNode._state.withLock { state in
            let turn = !state.callbacks.delivering
            state.callbacks.delivering = true
            return (state.observers.slots, turn)
        }
        var result: [any GraphObserver] = []
        result.reserveCapacity(slots.count)
        var sawDead = false
        for slot in slots where slot.bits != 0 {
            guard let object = slot.object else {
                sawDead = true
                continue
            }
            let observer = _graphObserver(object, bits: slot.bits)
            // The slot says how the observer is filed: only a tracking one needs its node.
            let trackerNode = slot.bits & _SlotFlags.tracking != 0 ? observer._graphTrackingNodeOrCast : nil
            if _removeObserver(observer, trackerNode: trackerNode, key: slot.key, holdingTurn: turn) {
                result.append(observer)
            }
        }
        if turn { _deliverQueuedCallbacks() }
        if sawDead { graphNode._sweepDeadObservers() }
        return result
    }

    /// Delivers the callbacks queued on this observable while this thread had the turn, until
    /// none is left; then gives the turn back. Runs with no lock held.
    func _deliverQueuedCallbacks() {
        let node = graphNode
        while let batch = node._state.withLock({ $0.callbacks.takeBatch() }) {
            for pending in batch {
                if pending.subscribed {
                    pending.observer.didSubscribe(to: self)
                    self.observer(pending.observer, didSubscribe: true)
                } else {
                    pending.observer.didUnsubscribe(from: self)
                    self.observer(pending.observer, didSubscribe: false)
                }
            }
        }  // each batch, and what its removals took out, is released here, with no lock held
    }

    /// Whether `observer` is subscribed right now ("am I subscribed").
    ///
    /// Thread safety: safe from any thread; the answer may be stale as soon as it returns if
    /// other threads change the graph.
    /// Callbacks: none.
    /// - Complexity: expected O(1).
    public func hasObserver(_ observer: some GraphObserver) -> Bool {
        let key = observer._graphEdgeKey
        let live: AnyObject? = graphNode._state.withLock { $0.observers.liveObject(for: key) }
        return live != nil
    }

    /// The current observers, in registration order (deallocated ones are skipped).
    ///
    /// Thread safety: safe from any thread; a consistent snapshot.
    /// Callbacks: none.
    /// - Complexity: O(n), n = number of observers.
    public var observers: [any GraphObserver] {
        let slots = graphNode._state.withLock { $0.observers.slots }
        var result: [any GraphObserver] = []
        result.reserveCapacity(slots.count)
        for slot in slots {
            if let object = slot.object { result.append(_graphObserver(object, bits: slot.bits)) }
        }
        return result
    }

    /// How many observers are subscribed (deallocated ones are not counted).
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(n), n = number of observers.
    public var observerCount: Int {
        let slots = graphNode._state.withLock { $0.observers.slots }
        return slots.reduce(0) { $0 + ($1.object == nil ? 0 : 1) }
    }

    /// Calls `body` with each current observer that is a `T`, in registration order: the typed
    /// broadcast. Observers that are not `T` are skipped.
    ///
    ///     wallet.broadcast(as: (any WalletObserver).self) { $0.creditsChanged(to: credits) }
    ///
    /// The observer list is snapshotted under the lock (O(1), copy-on-write); `body` runs with no
    /// lock held. Observers added during the broadcast are not called by it. An observer removed
    /// on this thread during the broadcast (by `body` or a callback) is not called after its
    /// removal returns. If `body` throws, the broadcast stops and rethrows.
    ///
    /// Thread safety: safe from any thread, including concurrently with itself.
    /// Callbacks: `body` only.
    /// - Returns: how many observers `body` was called with.
    /// - Complexity: O(n), n = number of observers; no allocation per observer. Casting to a
    ///   class type is cheapest; casting to a protocol uses the runtime's conformance cache.
    @inlinable
    @discardableResult
    public func broadcast<T>(as type: T.Type = T.self, _ body: (T) throws -> Void) rethrows -> Int {
        try graphNode._broadcast(as: type, body)
    }
}

// MARK: - Renamed in 0.2.0

// The observable side used to say `subscribe(_:)`; on an object that is observable and observer,
// `x.subscribe(y)` and `x.subscribe(to: y)` then did opposite things. "Subscribe" is now always
// what an observer does; an observable adds and removes observers. These spellings stay for one
// release so that existing code compiles, with a fix-it.
extension GraphObservable {
    /// Renamed `addObserver(_:)`.
    ///
    /// Thread safety, callbacks and complexity: see `addObserver(_:)`.
    @available(*, deprecated, renamed: "addObserver(_:)")
    @discardableResult
    public func subscribe<Observer: GraphObserver>(_ observer: Observer) -> Observer? {
        addObserver(observer)
    }

    /// Renamed `removeObserver(_:)`.
    ///
    /// Thread safety, callbacks and complexity: see `removeObserver(_:)`.
    @available(*, deprecated, renamed: "removeObserver(_:)")
    @discardableResult
    public func unsubscribe<Observer: GraphObserver>(_ observer: Observer) -> Observer? {
        removeObserver(observer)
    }

    /// Renamed `removeAllObservers()`.
    ///
    /// Thread safety, callbacks and complexity: see `removeAllObservers()`.
    @available(*, deprecated, renamed: "removeAllObservers()")
    @discardableResult
    public func unsubscribeAll() -> [any GraphObserver] {
        removeAllObservers()
    }

    /// Renamed `hasObserver(_:)`.
    ///
    /// Thread safety, callbacks and complexity: see `hasObserver(_:)`.
    @available(*, deprecated, renamed: "hasObserver(_:)")
    public func isSubscribed(_ observer: some GraphObserver) -> Bool {
        hasObserver(observer)
    }
}

// MARK: - The node

/// The kit's storage for one object's edges: its observers (if it is observable) and its
/// subscriptions (if it is a tracking observer). Store exactly one per object, as a `let`.
///
/// When the node is deallocated (with its owner), every edge it had is removed from the other
/// side at once, without callbacks.
///
/// Thread safety: `Sendable`; all of its state is behind its own lock.
/// Callbacks: none.
/// - Complexity: O(1) to create; deallocation is O(edges).
public final class GraphNode: @unchecked Sendable {
    @usableFromInline let _state: GraphLock<_NodeState>

    /// Creates an empty node.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init() {
        _state = GraphLock(_NodeState())
    }

    deinit {
        // Nobody else can reach this node any more; the lock only orders our reads after the
        // writes other threads made under it.
        let selfKey = ObserverID(self)
        let (observers, subscriptions) = _state.withLock { ($0.observers.slots, $0.subscriptions.slots) }
        for slot in observers where slot.bits & _SlotFlags.tracking != 0 {
            guard let object = slot.object,
                let trackerNode = _graphObserver(object, bits: slot.bits)._graphTrackingNodeOrCast
            else { continue }
            let removed = trackerNode._state.withLock { $0.subscriptions.remove(key: selfKey) }
            withExtendedLifetime(removed) {}
        }
        for slot in subscriptions {
            guard let object = slot.object else { continue }
            let observableNode = _graphObservable(object).graphNode
            let removed = observableNode._state.withLock { $0.observers.remove(key: selfKey) }
            withExtendedLifetime(removed) {}
        }
    }

    /// Runs `body` with the observable's observer registry, the tracker's subscription registry
    /// and the observable's callback queue, both nodes locked (in address order, so two threads
    /// never deadlock).
    static func _withEdge<R>(
        observable: GraphNode, tracker: GraphNode,
        _ body: (inout _Registry, inout _Registry, inout _CallbackQueue) -> R
    ) -> R {
        if observable === tracker {
            return observable._state.withLock { body(&$0.observers, &$0.subscriptions, &$0.callbacks) }
        }
        if ObjectIdentifier(observable) < ObjectIdentifier(tracker) {
            return observable._state.withLock { o in
                tracker._state.withLock { t in body(&o.observers, &t.subscriptions, &o.callbacks) }
            }
        }
        return tracker._state.withLock { t in
            observable._state.withLock { o in body(&o.observers, &t.subscriptions, &o.callbacks) }
        }
    }

    /// Removes the edge observable → tracker on both sides at once; `nil` if it was not there.
    /// `admit` runs in the same critical section when the edge was removed (see `_CallbackQueue`).
    static func _detachEdge(
        observable: GraphNode, tracker: GraphNode, admit: (_Removed, inout _CallbackQueue) -> Bool
    ) -> (removed: _Removed?, turn: Bool) {
        let trackerKey = ObserverID(tracker)
        let observableKey = ObserverID(observable)
        return _withEdge(observable: observable, tracker: tracker) { observers, subscriptions, callbacks in
            guard var removed = observers.remove(key: trackerKey) else { return (nil, false) }
            removed.other = subscriptions.remove(key: observableKey)?.object
            return (removed, admit(removed, &callbacks))
        }
    }

    /// Drops entries of deallocated observers. Liveness is read outside the lock, so that no
    /// object can be released (and its deinit run) while the lock is held.
    func _sweepDeadObservers() {
        let (slots, layout) = _state.withLock { ($0.observers.slots, $0.observers.layout) }
        var dead: [_DeadEntry] = []
        for position in slots.indices where slots[position].bits != 0 && slots[position].object == nil {
            dead.append(_DeadEntry(position: position, bits: slots[position].bits))
        }
        _state.withLock { state in
            if !dead.isEmpty { state.observers.dropDead(dead, layout: layout) }
            // The next sweep is due when the registry reaches four times its LIVE size, so dead
            // entries stay within three times the live ones, whatever the history (and the
            // sweeps cost O(1) amortized per subscribe).
            state.observers.sweepMark = max(64, 4 * (state.observers.slots.count - state.observers.vacant))
        }
    }

    @inlinable
    func _broadcast<T>(as type: T.Type, _ body: (T) throws -> Void) rethrows -> Int {
        // Set (on this thread only) when an observer is removed from this node on this thread
        // while the broadcast runs: from then on each observer is re-checked before its call.
        var removedOnThisThread = false
        return try withUnsafeMutablePointer(to: &removedOnThisThread) { flag in
            let (slots, layout) = _beginBroadcast(flag)
            var dead: [_DeadEntry] = []
            defer { _endBroadcast(flag, layout: layout, dead: dead) }
            var delivered = 0
            for position in slots.indices {
                let bits = slots[position].bits
                if bits == 0 { continue }
                if flag.pointee && !_isSubscribed(bits: bits) { continue }
                guard let object = slots[position].object else {
                    dead.append(_DeadEntry(position: position, bits: bits))
                    continue
                }
                if bits & _SlotFlags.boxed == 0 {
                    // `object` has no use after the cast, so its reference moves into `target`:
                    // one strong reference per delivery, as in a hand-written weak loop.
                    guard let target = object as? T else { continue }
                    try body(target)
                    delivered += 1
                } else if let target = unsafeDowncast(object, to: _ValueObserverBox.self).observer as? T {
                    try body(target)
                    delivered += 1
                }
            }
            return delivered
        }
    }

    @usableFromInline
    func _beginBroadcast(_ flag: UnsafeMutablePointer<Bool>) -> (ContiguousArray<_Slot>, UInt) {
        let thread = _currentThreadID()
        return _state.withLock { state in
            state.observers.broadcasts.append(_ActiveBroadcast(thread: thread, flag: flag))
            return (state.observers.slots, state.observers.layout)
        }
    }

    @usableFromInline
    func _endBroadcast(_ flag: UnsafeMutablePointer<Bool>, layout: UInt, dead: [_DeadEntry]) {
        _state.withLock { state in
            if let i = state.observers.broadcasts.lastIndex(where: { $0.flag == flag }) {
                state.observers.broadcasts.remove(at: i)
            }
            if !dead.isEmpty { state.observers.dropDead(dead, layout: layout) }
        }
    }

    @usableFromInline
    func _isSubscribed(bits: UInt) -> Bool {
        _state.withLock { $0.observers.contains(bits: bits) }
    }
}

// MARK: - Storage internals

@usableFromInline
enum _SlotFlags {
    /// The slot's object is a `_ValueObserverBox` holding a struct observer.
    @inlinable static var boxed: UInt { 2 }
    /// The slot's object is a tracking observer (its key is the observer's node).
    @inlinable static var tracking: UInt { 4 }
    @inlinable static var keyMask: UInt { ~UInt(6) }
}

/// One entry of a registry: a weak reference and the entry's key with its flags.
/// `bits == 0` marks a vacant slot (keys are never zero).
@usableFromInline
struct _Slot {
    @usableFromInline weak var object: AnyObject?
    @usableFromInline var bits: UInt

    @inlinable init(object: AnyObject?, bits: UInt) {
        self.object = object
        self.bits = bits
    }

    @inlinable var key: ObserverID { ObserverID(_raw: bits & _SlotFlags.keyMask) }
}

/// Holds a struct observer, so that slots can refer to it weakly like to any object.
@usableFromInline
final class _ValueObserverBox {
    @usableFromInline let observer: any GraphObserver
    init(_ observer: any GraphObserver) { self.observer = observer }
}

/// A broadcast in progress on a node: the thread it runs on and its "removed" flag.
@usableFromInline
struct _ActiveBroadcast {
    let thread: UInt
    let flag: UnsafeMutablePointer<Bool>
    @usableFromInline init(thread: UInt, flag: UnsafeMutablePointer<Bool>) {
        self.thread = thread
        self.flag = flag
    }
}

/// An entry a reader found dead (its object deallocated), to be dropped under the lock.
@usableFromInline
struct _DeadEntry {
    let position: Int
    let bits: UInt
    @usableFromInline init(position: Int, bits: UInt) {
        self.position = position
        self.bits = bits
    }
}

/// What a removal took out: the strong references are released by the caller after unlocking.
@usableFromInline
struct _Removed {
    let object: AnyObject
    let box: _ValueObserverBox?
    var other: AnyObject?
}

@usableFromInline
enum _InsertOutcome {
    case inserted(sweepDue: Bool)
    /// Already present; carries the live object so that it is released after unlocking.
    case present(AnyObject)
}

/// An entry taken out by `detachAll`, with whether it is already removed.
struct _Detached {
    let object: AnyObject
    let bits: UInt
    let box: _ValueObserverBox?
    var removed: Bool
}

@usableFromInline
struct _NodeState {
    @usableFromInline var observers = _Registry()
    @usableFromInline var subscriptions = _Registry()
    var callbacks = _CallbackQueue()
    @usableFromInline init() {}
}

/// The graph callbacks of one observable, in the order its edge changes took effect.
///
/// Each change is admitted in the critical section that makes it. If no thread is delivering
/// this observable's callbacks, the caller takes the turn and fires its callbacks itself, then
/// delivers whatever was queued meanwhile (`takeBatch` until `nil`, which gives the turn back).
/// Otherwise the change's callbacks are queued behind the running delivery: a change made inside
/// a callback (the reentrant case), or on another thread meanwhile, never overtakes an earlier
/// one. Nobody waits for anybody, so the queue cannot deadlock.
struct _CallbackQueue {
    /// A thread has the turn. While `false`, `pending` is empty.
    var delivering = false
    var pending: [_PendingCallback] = []

    /// `true`: the caller has the turn, and fires the callbacks now; `false`: they were queued.
    /// A caller already `holdingTurn` fires them now only if nothing is queued before them.
    mutating func admit(
        _ observer: some GraphObserver, subscribed: Bool, removed: _Removed?, holdingTurn: Bool = false
    ) -> Bool {
        if holdingTurn ? pending.isEmpty : !delivering {
            delivering = true
            return true
        }
        pending.append(_PendingCallback(observer: observer, subscribed: subscribed, removed: removed))
        return false
    }

    /// What was queued, moved out (released by the caller, after unlocking); `nil` when nothing
    /// is, which gives the turn back.
    mutating func takeBatch() -> [_PendingCallback]? {
        guard !pending.isEmpty else {
            delivering = false
            return nil
        }
        defer { pending = [] }
        return pending
    }
}

/// The callbacks of one change, waiting for their turn.
struct _PendingCallback {
    let observer: any GraphObserver
    let subscribed: Bool
    /// What a removal took out, kept until its callbacks have run.
    let removed: _Removed?
}

/// An ordered set of weakly referenced objects with O(1) lookup by key: the registration-order
/// slot array (vacated slots are compacted away once they are three quarters of it) and a hash
/// index from key to slot position.
@usableFromInline
struct _Registry {
    @usableFromInline var slots = ContiguousArray<_Slot>()
    /// Positions as `UInt32`: 12 bytes a bucket instead of 16, a quarter of the index's memory.
    var index: [ObserverID: UInt32] = [:]
    /// Strong references to boxed struct observers (slots refer to the boxes weakly).
    var boxes: [ObserverID: _ValueObserverBox] = [:]
    var vacant = 0
    /// Changes whenever slot positions change (compaction), so stale positions are detected.
    @usableFromInline var layout: UInt = 0
    @usableFromInline var broadcasts: [_ActiveBroadcast] = []
    /// Slot count at which the next sweep for deallocated objects is due (doubles each time).
    var sweepMark = 64

    @usableFromInline init() {}

    mutating func insert(key: ObserverID, object: AnyObject, flags: UInt, box: _ValueObserverBox?)
        -> _InsertOutcome
    {
        // Positions must fit the index (over four billion entries: refused like a duplicate).
        guard slots.count < Int(UInt32.max) else { return .present(object) }
        let position = slots.count
        if let old = index.updateValue(UInt32(position), forKey: key) {
            if let existing = slots[Int(old)].object {
                index[key] = old
                return .present(existing)
            }
            vacate(Int(old))  // left by a deallocated object that had the same identity
        }
        slots.append(_Slot(object: object, bits: key._raw | flags))
        if let box { boxes[key] = box }
        var sweepDue = false
        if slots.count >= sweepMark {
            sweepMark = slots.count * 2
            sweepDue = true
        }
        _checkInvariants()
        return .inserted(sweepDue: sweepDue)
    }

    /// Removes `key`; returns the live object (and box) it held, or `nil` if it was absent or
    /// its object is gone.
    mutating func remove(key: ObserverID) -> _Removed? {
        guard let stored = index.removeValue(forKey: key) else { return nil }
        let position = Int(stored)
        let bits = slots[position].bits
        let object = slots[position].object
        vacate(position)
        let box = bits & _SlotFlags.boxed != 0 ? boxes.removeValue(forKey: key) : nil
        if object != nil { noteRemoval() }
        compactIfNeeded()
        _checkInvariants()
        guard let object else { return nil }
        return _Removed(object: object, box: box, other: nil)
    }

    /// Takes out every entry in order: plain entries are removed, tracking entries are returned
    /// with `removed == false` for the caller to detach edge by edge.
    mutating func detachAll() -> [_Detached] {
        var result: [_Detached] = []
        result.reserveCapacity(slots.count - vacant)
        var removedAny = false
        for position in slots.indices where slots[position].bits != 0 {
            let bits = slots[position].bits
            guard let object = slots[position].object else {
                index[ObserverID(_raw: bits & _SlotFlags.keyMask)] = nil
                vacate(position)
                continue
            }
            if bits & _SlotFlags.tracking != 0 {
                result.append(_Detached(object: object, bits: bits, box: nil, removed: false))
                continue
            }
            let key = ObserverID(_raw: bits & _SlotFlags.keyMask)
            index[key] = nil
            vacate(position)
            let box = bits & _SlotFlags.boxed != 0 ? boxes.removeValue(forKey: key) : nil
            result.append(_Detached(object: object, bits: bits, box: box, removed: true))
            removedAny = true
        }
        if removedAny { noteRemoval() }
        compactIfNeeded()
        _checkInvariants()
        return result
    }

    func liveObject(for key: ObserverID) -> AnyObject? {
        guard let position = index[key] else { return nil }
        return slots[Int(position)].object
    }

    /// The live objects in order (strong references: release them after unlocking).
    func liveObjects() -> [AnyObject] {
        var result: [AnyObject] = []
        result.reserveCapacity(slots.count - vacant)
        for slot in slots {
            if let object = slot.object { result.append(object) }
        }
        return result
    }

    /// Whether the entry with exactly these bits is still registered.
    @usableFromInline
    func contains(bits: UInt) -> Bool {
        guard let position = index[ObserverID(_raw: bits & _SlotFlags.keyMask)] else { return false }
        return slots[Int(position)].bits == bits
    }

    /// Drops entries a reader found dead, if the positions it saw are still valid. A dead weak
    /// reference never revives and positions are never reused without a layout change, so equal
    /// bits at an equal position mean the same dead entry.
    mutating func dropDead(_ dead: [_DeadEntry], layout seen: UInt) {
        guard seen == layout else { return }
        for entry in dead where slots[entry.position].bits == entry.bits {
            index[ObserverID(_raw: entry.bits & _SlotFlags.keyMask)] = nil
            vacate(entry.position)
        }
        compactIfNeeded()
        _checkInvariants()
    }

    private mutating func vacate(_ position: Int) {
        slots[position].object = nil
        slots[position].bits = 0
        vacant += 1
    }

    /// Marks the broadcasts running on this thread, which must re-check each observer from now on.
    private func noteRemoval() {
        guard !broadcasts.isEmpty else { return }
        let thread = _currentThreadID()
        for broadcast in broadcasts where broadcast.thread == thread {
            broadcast.flag.pointee = true
        }
    }

    private mutating func compactIfNeeded() {
        guard vacant > 0 else { return }
        if vacant == slots.count {
            slots.removeAll(keepingCapacity: slots.count <= 1024)
            index.removeAll(keepingCapacity: index.count <= 1024)
            vacant = 0
            layout &+= 1
            return
        }
        guard vacant >= 16, vacant * 4 >= slots.count * 3 else { return }
        var kept = ContiguousArray<_Slot>()
        kept.reserveCapacity(slots.count - vacant)
        for slot in slots where slot.bits != 0 { kept.append(slot) }
        slots = kept
        index.removeAll(keepingCapacity: index.capacity <= 4 * slots.count)
        for position in slots.indices { index[slots[position].key] = UInt32(position) }
        vacant = 0
        layout &+= 1
    }

    /// Internal consistency of the registry, checked after every mutation in builds with
    /// `OBSERVERGRAPH_INTERNAL_CHECKS` (the package's debug builds): counts always, every entry
    /// when the registry is small enough for that to stay cheap.
    @inline(__always)
    func _checkInvariants() {
        #if OBSERVERGRAPH_INTERNAL_CHECKS
            precondition(index.count == slots.count - vacant, "ObserverGraph: index and slots disagree")
            if slots.count <= 256 {
                let problems = violations()
                precondition(problems.isEmpty, "ObserverGraph: \(problems)")
            }
        #endif
    }

    /// Every internal inconsistency of this registry, as text (empty when consistent).
    func violations() -> [String] {
        var problems: [String] = []
        if index.count != slots.count - vacant {
            problems.append("index has \(index.count) keys but \(slots.count - vacant) slots are used")
        }
        var used = 0
        var boxed = 0
        for position in slots.indices where slots[position].bits != 0 {
            used += 1
            let slot = slots[position]
            if index[slot.key].map(Int.init) != position {
                problems.append("slot \(position) (\(slot.key)) is not indexed at its position")
            }
            if slot.bits & _SlotFlags.boxed != 0 {
                boxed += 1
                if boxes[slot.key] == nil { problems.append("boxed slot \(position) has no box") }
            }
        }
        if used != slots.count - vacant {
            problems.append("\(used) slots used but vacant count says \(slots.count - vacant)")
        }
        if boxed != boxes.count {
            problems.append("\(boxes.count) boxes for \(boxed) boxed slots")
        }
        return problems
    }
}

// MARK: - Consistency audit

extension GraphNode {
    /// Every consistency violation among `nodes`, as readable text; empty when the graph is
    /// consistent.
    ///
    /// It checks each node's internal structure, and that every edge between two of the given
    /// nodes is recorded on both sides (a tracking observer's subscription list and the
    /// observable's observer list agree). The check sees one consistent cut: all the nodes are
    /// locked together (in address order) while their state is read.
    ///
    /// Thread safety: safe from any thread, while other threads change the graph.
    /// Callbacks: none.
    /// - Complexity: O(n + e), n = nodes, e = edges among them.
    public static func consistencyViolations(among nodes: [GraphNode]) -> [String] {
        let ordered = _inLockOrder(nodes)
        return _violations(among: ordered, states: _captureLocked(ordered))
    }

    /// The violations `consistencyViolations(among:)` reports, found in states captured together.
    static func _violations(among ordered: [GraphNode], states: [_NodeState]) -> [String] {
        var byKey: [ObserverID: _NodeState] = [:]
        for (node, state) in zip(ordered, states) { byKey[ObserverID(node)] = state }
        var problems: [String] = []
        for (node, state) in zip(ordered, states) {
            let name = ObserverID(node).description
            problems += state.observers.violations().map { "\(name) observers: \($0)" }
            problems += state.subscriptions.violations().map { "\(name) subscriptions: \($0)" }
            for slot in state.observers.slots where slot.bits & _SlotFlags.tracking != 0 {
                guard slot.object != nil, let tracker = byKey[slot.key] else { continue }
                if tracker.subscriptions.index[ObserverID(node)] == nil {
                    problems.append("\(name) lists observer \(slot.key), which does not list it")
                }
            }
            for slot in state.subscriptions.slots where slot.bits != 0 {
                guard slot.object != nil, let observable = byKey[slot.key] else { continue }
                guard let position = observable.observers.index[ObserverID(node)] else {
                    problems.append("\(name) lists subscription \(slot.key), which does not list it")
                    continue
                }
                if observable.observers.slots[Int(position)].bits & _SlotFlags.tracking == 0 {
                    problems.append("\(slot.key) lists \(name) as a plain observer, not a tracking one")
                }
            }
        }
        return problems
    }

    /// `nodes` without duplicates, sorted by address: the order in which to lock several nodes.
    static func _inLockOrder(_ nodes: [GraphNode]) -> [GraphNode] {
        var unique: [ObjectIdentifier: GraphNode] = [:]
        for node in nodes { unique[ObjectIdentifier(node)] = node }
        return unique.keys.sorted().map { unique[$0]! }
    }

    /// Copies the states of `nodes` (in lock order, see `_inLockOrder`) while holding all of their
    /// locks at once: one consistent cut. `whileLocked` runs with the copies before any lock is
    /// released; it must not call user code or release objects (carry them out instead).
    static func _captureLocked(
        _ nodes: [GraphNode], whileLocked: ([_NodeState]) -> Void = { _ in }
    ) -> [_NodeState] {
        // Iterative, so that a graph of any size needs no deep stack.
        var states: [_NodeState] = []
        states.reserveCapacity(nodes.count)
        for node in nodes {
            node._state._lockUnscoped()
            states.append(node._state._stateWhileLocked)
        }
        whileLocked(states)
        for node in nodes.reversed() { node._state._unlockUnscoped() }
        return states
    }
}

// MARK: - Casting helpers (objects in slots always came from conforming types)

func _graphObserver(_ object: AnyObject, bits: UInt) -> any GraphObserver {
    if bits & _SlotFlags.boxed != 0 {
        return unsafeDowncast(object, to: _ValueObserverBox.self).observer
    }
    return object as! any GraphObserver
}

func _graphObservable(_ object: AnyObject) -> any GraphObservable {
    object as! any GraphObservable
}
