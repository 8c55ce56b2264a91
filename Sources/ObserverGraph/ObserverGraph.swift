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
//   observer is never called and is pruned. An observable holds a tracking observer weakly, and
//   the tracker's list names the observable's node without keeping anything alive, so no pairing
//   forms a retain cycle; when either side's node is deallocated, its edges are removed from both
//   sides at once. Struct observers are values: the observable keeps a copy until they are
//   unsubscribed.
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
#if !canImport(Darwin) && !os(Windows) && canImport(Synchronization) && !OBSERVERGRAPH_NO_ATOMICS
    import Synchronization
#endif

// MARK: - Lock

// Apple systems and Windows use their platform lock; elsewhere, the standard library's atomics.
// `-DOBSERVERGRAPH_NO_ATOMICS` (for testing, not for apps) forces the platform-lock paths on any
// platform, so that CI on Linux runs the whole suite on them too (a `pthread_mutex_t` there).
#if canImport(Darwin) || os(Windows) || !canImport(Synchronization) || OBSERVERGRAPH_NO_ATOMICS
    #if canImport(Darwin)
        @usableFromInline typealias _GraphLockPrimitive = os_unfair_lock
    #elseif os(Windows)
        @usableFromInline typealias _GraphLockPrimitive = SRWLOCK
    #else
        @usableFromInline typealias _GraphLockPrimitive = pthread_mutex_t
    #endif

    /// Storage of a `GraphLock`: the protected state and the platform's lock in one allocation.
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

        /// A buffer holding `initialState`, with its lock initialized.
        @inlinable
        static func make(_ initialState: State) -> _GraphLockBuffer<State> {
            let buffer = unsafeDowncast(create(minimumCapacity: 1) { _ in initialState }, to: Self.self)
            buffer.withUnsafeMutablePointerToElements { lock in
                #if canImport(Darwin)
                    lock.initialize(to: os_unfair_lock())
                #elseif os(Windows)
                    InitializeSRWLock(lock)
                #else
                    // Default attributes: a plain, non-recursive mutex. It cannot fail with them.
                    _ = pthread_mutex_init(lock, nil)
                #endif
            }
            return buffer
        }

        @inlinable @inline(__always)
        func _withLockedState<Result, Failure: Error>(
            _ body: (inout State) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            try withUnsafeMutablePointers { (state, lock) throws(Failure) -> Result in
                _lock(lock)
                defer { _unlock(lock) }
                // A zero-sized header's address is the object's own (see `_withZeroSizedState`).
                if MemoryLayout<State>.size == 0 { return try _withZeroSizedState(state.pointee, body) }
                return try body(&state.pointee)
            }
        }

        @inlinable @inline(__always)
        func _lock(_ lock: UnsafeMutablePointer<_GraphLockPrimitive>) {
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
            #elseif os(Windows)
                AcquireSRWLockExclusive(lock)
            #else
                _ = pthread_mutex_lock(lock)
            #endif
        }

        @inlinable @inline(__always)
        func _unlock(_ lock: UnsafeMutablePointer<_GraphLockPrimitive>) {
            #if canImport(Darwin)
                os_unfair_lock_unlock(lock)
            #elseif os(Windows)
                ReleaseSRWLockExclusive(lock)
            #else
                _ = pthread_mutex_unlock(lock)
            #endif
        }

        func _lockUnscoped() { withUnsafeMutablePointerToElements { _lock($0) } }
        func _unlockUnscoped() { withUnsafeMutablePointerToElements { _unlock($0) } }
        var _stateWhileLocked: State { withUnsafeMutablePointerToHeader { $0.pointee } }
    }
#else
    /// Storage of a `GraphLock` where the standard library has atomics but the platform has no
    /// lock as cheap as Darwin's (Linux: a `pthread_mutex_t` costs two calls and 40 bytes): one
    /// atomic word and the state.
    ///
    /// The word is 0 (free), 1 (held) or 2 (held, and a thread may be waiting). Taking a free
    /// lock is one compare-and-exchange and releasing it one exchange, both inline. A thread
    /// that finds it held spins briefly, then sets 2 and sleeps on a condition variable of a
    /// process-wide table (`_GraphLockParking`, chosen by the address of the object holding the
    /// word); a release that
    /// finds 2 wakes that condition's sleepers, who compete again. A sleeper checks the word
    /// under the table entry's mutex, which the waker also takes, so no wake-up is lost.
    @usableFromInline
    final class _GraphLockBuffer<State> {
        @usableFromInline let _word = Atomic<UInt32>(0)
        /// Read and written only while holding the lock (`_word`): no exclusivity check needed.
        @usableFromInline @exclusivity(unchecked) var _state: State

        @usableFromInline
        init(_ state: State) {
            _state = state
        }

        /// A buffer holding `initialState`.
        @inlinable
        static func make(_ initialState: State) -> _GraphLockBuffer<State> {
            _GraphLockBuffer(initialState)
        }

        @inlinable @inline(__always)
        func _withLockedState<Result, Failure: Error>(
            _ body: (inout State) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            _lockUnscoped()
            defer { _unlockUnscoped() }
            // A zero-sized `_state`'s address is the object's own (see `_withZeroSizedState`).
            if MemoryLayout<State>.size == 0 { return try _withZeroSizedState(_state, body) }
            return try body(&_state)
        }

        @inlinable @inline(__always)
        func _lockUnscoped() { _graphLockAcquire(_word, parkingFor: self) }

        @inlinable @inline(__always)
        func _unlockUnscoped() { _graphLockRelease(_word, parkingFor: self) }

        var _stateWhileLocked: State { _state }
    }

    /// Takes the lock whose word is `word` (0 free, 1 held, 2 held with a thread perhaps
    /// waiting; see `_GraphLockBuffer`): one compare-and-exchange when it is free. `owner` is
    /// the object holding the word, which chooses the parking entry.
    @inlinable @inline(__always)
    func _graphLockAcquire(_ word: borrowing Atomic<UInt32>, parkingFor owner: AnyObject) {
        if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            _graphLockContended(word, parkingFor: owner)
        }
    }

    /// Releases the lock whose word is `word`: one exchange, and a wake-up when a thread may
    /// be waiting.
    @inlinable @inline(__always)
    func _graphLockRelease(_ word: borrowing Atomic<UInt32>, parkingFor owner: AnyObject) {
        if word.exchange(0, ordering: .releasing) == 2 { _graphLockWake(parkingFor: owner) }
    }

    /// The lock is held: spins a little, then sleeps until a release wakes this thread.
    @usableFromInline @inline(never)
    func _graphLockContended(_ word: borrowing Atomic<UInt32>, parkingFor owner: AnyObject) {
        for _ in 0..<64 {
            if word.load(ordering: .relaxed) == 0,
                word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
            {
                return
            }
        }
        let entry = _GraphLockParking.entry(for: owner)
        // Holding it with 2 makes its release wake the sleepers; 0 means it was free.
        while word.exchange(2, ordering: .acquiring) != 0 {
            pthread_mutex_lock(entry.mutex)
            // Under the entry's mutex, which the release takes before waking: a release after
            // this check wakes this thread; one before it left the word 0 or 1.
            if word.load(ordering: .relaxed) == 2 { pthread_cond_wait(entry.condition, entry.mutex) }
            pthread_mutex_unlock(entry.mutex)
        }
    }

    /// A release found the word at 2: wakes the threads sleeping on its table entry.
    @usableFromInline @inline(never)
    func _graphLockWake(parkingFor owner: AnyObject) {
        let entry = _GraphLockParking.entry(for: owner)
        pthread_mutex_lock(entry.mutex)
        pthread_cond_broadcast(entry.condition)
        pthread_mutex_unlock(entry.mutex)
    }

    /// Where threads wait for a contended `GraphLock` or node lock: a fixed table of mutex and
    /// condition pairs, shared by every lock (a lock chooses one by the address of the object
    /// holding its word), allocated once and never freed. Sleepers of different locks on one entry are all woken and compete again.
    @usableFromInline
    final class _GraphLockParking: @unchecked Sendable {
        let mutex: UnsafeMutablePointer<pthread_mutex_t>
        let condition: UnsafeMutablePointer<pthread_cond_t>

        private init() {
            mutex = .allocate(capacity: 1)
            condition = .allocate(capacity: 1)
            _ = pthread_mutex_init(mutex, nil)
            _ = pthread_cond_init(condition, nil)
        }

        private static let table: [_GraphLockParking] = (0..<64).map { _ in _GraphLockParking() }

        static func entry(for lock: AnyObject) -> _GraphLockParking {
            let address = UInt(bitPattern: ObjectIdentifier(lock))
            return table[Int((address >> 4) % UInt(table.count))]
        }
    }
#endif

/// Runs `body` on a copy of a zero-sized state (`Void`, an empty struct), under the caller's lock.
///
/// A zero-sized stored property of a class (the buffer's `_state`, or `ManagedBuffer.header`) is
/// placed at offset 0: its address is the object's own, where its type pointer lives. Under the
/// thread sanitizer, `body(&state)` records a write of one byte at that address, and every
/// generic method of the buffer reads the type pointer (for `State`'s metadata) before it takes
/// the lock: a reported "Swift access race" on a lock with no state, where nothing is written.
/// A zero-sized value has no bytes, so a local copy is the same value and nothing is lost by not
/// storing it back.
@inlinable @inline(__always)
func _withZeroSizedState<State, Result, Failure: Error>(
    _ state: State, _ body: (inout State) throws(Failure) -> Result
) throws(Failure) -> Result {
    var copy = state
    return try body(&copy)
}

/// A value protected by a lock: the one lock every layer of ObserverGraph uses (where the lock is
/// an atomic word, a `GraphNode` stores the same lock's word and its state in itself).
///
/// Copies of a `GraphLock` share the same state and the same lock. The lock is not recursive:
/// do not call `withLock` on the same lock from inside its body, and do not call code you do not
/// control (callbacks, closures, `deinit` of your objects) from inside the body.
///
/// The lock is the platform's cheapest: `os_unfair_lock` on Apple platforms, `SRWLOCK` on
/// Windows, and elsewhere (Linux) one atomic word, taken and released inline, whose waiters
/// spin briefly and then sleep until a release wakes them (like a default `pthread_mutex_t`,
/// it is not fair and does not raise the priority of the thread holding it).
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
    @inlinable
    public init(_ initialState: State) {
        _buffer = .make(initialState)
    }

    /// Runs `body` with exclusive access to the state and returns its result. What `body` throws
    /// is thrown with its own type (`Never` for a body that does not throw), after the lock is
    /// released; the state keeps the changes `body` made before throwing.
    ///
    /// Thread safety: safe from any thread; callers are serialized.
    /// Callbacks: none besides `body`, which runs under the lock: keep it short and do not call
    /// out of it.
    /// - Complexity: O(1) plus the cost of `body`.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try _buffer._withLockedState(body)
    }
}

extension GraphLock: @unchecked Sendable where State: Sendable {}

extension GraphLock {
    /// Takes the lock without a scope: for holding many locks at once (in a fixed order). Every
    /// call must be paired with `_unlockUnscoped()` on the same thread.
    func _lockUnscoped() {
        _buffer._lockUnscoped()
    }

    /// Releases a lock taken with `_lockUnscoped()`.
    func _unlockUnscoped() {
        _buffer._unlockUnscoped()
    }

    /// A copy of the state; only while holding the lock.
    var _stateWhileLocked: State {
        _buffer._stateWhileLocked
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
    @usableFromInline let _raw: UInt64

    @inlinable init(_raw: UInt64) { self._raw = _raw }

    /// Creates a new identity, different from every other identity in this process.
    ///
    /// Identities are 64-bit on every platform, 32-bit ones included: the counter behind them
    /// repeats after 2^61 identities (at a billion a second, after 73 years).
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
        _raw = UInt64(UInt(bitPattern: ObjectIdentifier(object)))
    }

    /// A short hexadecimal rendering, for logs and diagrams.
    ///
    /// Thread safety: a pure function of the value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        "ObserverID(0x" + String(_raw, radix: 16) + ")"
    }
}

/// The node of `object` if its class adopts `GraphTrackingObserver`: the check behind
/// `_graphTrackingNode(object:)` for a subclass that adopted it below a class that adopted
/// `GraphObserver` (whose protocol hook answers `nil`).
@usableFromInline
func _graphDynamicTrackingNode(_ object: AnyObject) -> GraphNode? {
    // The answer depends only on the class, so it is cached: a conformance check per call
    // would cost more than the whole subscribe.
    let type = UInt(bitPattern: ObjectIdentifier(Swift.type(of: object)))
    if _TrackingClassCache.lookup(type) == false { return nil }
    let tracker = object as? any GraphTrackingObserver
    _TrackingClassCache.store(type, tracker != nil)
    return tracker?.graphNode
}

/// Whether the class with this metadata is known (cached) not to adopt `GraphTrackingObserver`.
@usableFromInline
func _graphIsKnownPlainClass(_ type: ObjectIdentifier) -> Bool {
    _TrackingClassCache.lookup(UInt(bitPattern: type)) == false
}

/// Which classes are tracking observers (for `_graphTrackingNodeOrCast`): a small direct-mapped
/// table of words, each a class's metadata address with the answer in its low bit (metadata is
/// pointer-aligned); a collision only costs a recheck. Every subscribe and unsubscribe of a class
/// observer whose protocol hook says "not tracking" reads it.
enum _TrackingClassCache {
    /// `true` or `false` if `type` was seen, `nil` if not (or evicted).
    static func lookup(_ type: UInt) -> Bool? {
        let entry = load(slot(type))
        guard entry & ~1 == type & ~1, entry != 0 else { return nil }
        return entry & 1 == 1
    }

    static func store(_ type: UInt, _ tracking: Bool) {
        store((type & ~1) | (tracking ? 1 : 0), at: slot(type))
    }

    private static func slot(_ type: UInt) -> Int {
        Int(truncatingIfNeeded: (type >> 4) ^ (type >> 11)) & 127
    }

    #if canImport(Darwin) || os(Windows) || !canImport(Synchronization) || OBSERVERGRAPH_NO_ATOMICS
        private static let table = GraphLock<[UInt]>(Array(repeating: 0, count: 128))

        private static func load(_ slot: Int) -> UInt { table.withLock { $0[slot] } }
        private static func store(_ entry: UInt, at slot: Int) { table.withLock { $0[slot] = entry } }
    #else
        /// One atomic word per entry, allocated once and never freed: a lookup is one relaxed
        /// load, where a lock round trip cost about 45 instructions. An entry is complete in
        /// itself, so no ordering with other memory is needed.
        nonisolated(unsafe) private static let table: UnsafeMutablePointer<Atomic<UInt>> = {
            let table = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: 128)
            for slot in 0..<128 { (table + slot).initialize(to: Atomic(0)) }
            return table
        }()

        private static func load(_ slot: Int) -> UInt { table[slot].load(ordering: .relaxed) }
        private static func store(_ entry: UInt, at slot: Int) {
            table[slot].store(entry, ordering: .relaxed)
        }
    #endif
}

enum _ObserverIDSource {
    static let counter = GraphLock<UInt64>(0)
}

// MARK: - Protocols

/// What the kit's protocols refine so that no conformance to them can be isolated to an actor.
///
/// The kit looks conformances up at run time (an observer stored as an object is handed back as
/// `any GraphObserver`), from whatever thread changes the graph. A conformance isolated to an
/// actor (`@MainActor GraphObserver`) is visible only on that actor, so such a lookup would fail
/// elsewhere. Refining `SendableMetatype` (SE-0470) turns that into a compile error instead:
/// "cannot form main actor-isolated conformance ... to SendableMetatype-inheriting protocol".
/// A `@MainActor` class conforms with a nonisolated conformance (the defaults are nonisolated;
/// mark your own callback implementations `nonisolated`), and may still adopt its app's own
/// message protocols with isolated conformances: see `GraphObservable.post(as:isolation:_:)`.
/// Compilers before 6.2 have neither isolated conformances nor `SendableMetatype`.
#if compiler(>=6.2)
    public typealias _GraphConformance = SendableMetatype
#else
    public typealias _GraphConformance = Any
#endif

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
public protocol GraphObserver: _GraphConformance {
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
public protocol GraphObservable: AnyObject, _GraphConformance {
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
    @inlinable public func didSubscribe(to observable: any GraphObservable) {}

    /// Default: does nothing. Implement it to learn about removed subscriptions.
    ///
    /// Thread safety: see `GraphObserver`. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public func didUnsubscribe(from observable: any GraphObservable) {}

    /// Default: `nil`, because a plain observer keeps no node. Exists so that the kit finds a
    /// tracking observer's node without a dynamic cast.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var _graphTrackingNode: GraphNode? { nil }

    /// Subscribes this observer to `observable`; the same as `observable.addObserver(self)`.
    ///
    /// Thread safety: safe from any thread. `isolation` (by default the caller's actor, `nil`
    /// from nonisolated code) is where `post(as:isolation:_:)` reaches this observer.
    /// Callbacks: on success, `didSubscribe(to:)` then `observer(_:didSubscribe: true)`.
    /// - Returns: `true` if added, `false` if it was already subscribed (nothing fires).
    /// - Complexity: expected O(1).
    @discardableResult
    public func subscribe(
        to observable: any GraphObservable, isolation: (any Actor)? = #isolation
    ) -> Bool {
        observable.addObserver(self, isolation: isolation) != nil
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
    @inlinable
    var _graphTrackingNodeOrCast: GraphNode? {
        _graphTrackingNode(object: _graphObjectIfClass)
    }

    /// `_graphTrackingNodeOrCast` for a caller that already has `_graphObjectIfClass`.
    @inlinable
    func _graphTrackingNode(object: AnyObject?) -> GraphNode? {
        if let node = _graphTrackingNode { return node }
        guard let object else { return nil }
        return _graphDynamicTrackingNode(object)
    }

    /// `_graphTrackingNodeOrCast`, answered from the class when the class is known (cached) not to
    /// adopt `GraphTrackingObserver`: the class is read from the reference, which is not copied
    /// (a copy is a retain and a release, which are slow on an object that has weak references).
    @inlinable
    var _graphTrackingNodeFromClass: GraphNode? {
        guard Self.self is AnyObject.Type else { return nil }
        if let node = _graphTrackingNode { return node }
        guard !_graphIsKnownPlainClass(ObjectIdentifier(type(of: self))) else { return nil }
        return _graphObjectIfClass.flatMap(_graphDynamicTrackingNode)
    }

    /// This observer as an object reference when it is a class instance, without the bridging
    /// machinery that `as AnyObject` goes through in generic code; `nil` for a value type.
    @inlinable
    var _graphObjectIfClass: AnyObject? {
        guard Self.self is AnyObject.Type else { return nil }
        return unsafeBitCast(self, to: AnyObject.self)
    }

    /// The key observables file this observer under: the node for tracking observers.
    @inlinable
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
    @inlinable public var observerID: ObserverID { ObserverID(self) }
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
    @inlinable public var observerID: ObserverID { ObserverID(graphNode) }

    /// Default: `graphNode`, so that observables update this observer's subscription list.
    /// Inlinable, so that a subscribe of a known tracking class reads its node directly.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable public var _graphTrackingNode: GraphNode? { graphNode }

    /// Every observable this observer is subscribed to, in subscription order.
    ///
    /// Thread safety: safe from any thread; a consistent snapshot taken under the node's lock
    /// (and the kit's teardown lock, which node deallocations share: see `GraphNode`).
    /// Callbacks: none.
    /// - Complexity: O(n), n = number of subscriptions.
    public var subscriptions: [any GraphObservable] {
        let objects = graphNode._subscriptionObjects()
        var result: [any GraphObservable] = []
        result.reserveCapacity(objects.count)
        for case let object? in objects {
            if let observable = _graphObservable(object) { result.append(observable) }
        }
        return result
    }

    /// How many observables this observer is subscribed to.
    ///
    /// Thread safety: safe from any thread (it takes the kit's teardown lock, as `subscriptions`
    /// does). Callbacks: none.
    /// - Complexity: O(n), n = number of subscriptions (deallocated observables are skipped).
    public var subscriptionCount: Int {
        graphNode._subscriptionObjects().reduce(0) { $0 + ($1 == nil ? 0 : 1) }
    }

    /// Removes this observer from every observable it is subscribed to.
    ///
    /// Each edge is removed atomically on both sides. Observables subscribed concurrently while
    /// this runs may remain.
    ///
    /// Thread safety: safe from any thread (the list is read as `subscriptions` reads it).
    /// Callbacks: for each removed edge, in subscription order, `didUnsubscribe(from:)` then the
    /// observable's `observer(_:didSubscribe: false)`.
    /// - Returns: the observables it was removed from, in subscription order.
    /// - Complexity: O(n), n = number of subscriptions.
    @discardableResult
    public func unsubscribeFromAll() -> [any GraphObservable] {
        let live = graphNode._subscriptionObjects()
        var removed: [any GraphObservable] = []
        for case let object? in live {
            guard let observable = _graphObservable(object) else { continue }
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
    @inlinable public func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {}

    /// Subscribes `observer`: it joins the end of the observer list.
    ///
    /// The check ("already subscribed?") and the insertion happen in one critical section. For a
    /// tracking observer, this observable joins its `subscriptions` in the same critical section.
    /// A class observer is held weakly; a struct observer is stored by value.
    ///
    /// `isolation` says where the observer lives: by default the caller's actor (`#isolation`),
    /// so a `@MainActor` view model that adds itself from the main actor is reached by
    /// `post(as:isolation:_:)` on the main actor. From nonisolated code it is `nil`: posts call
    /// the observer on the posting thread. Pass an actor explicitly to add an observer that lives
    /// on another actor. `broadcast(as:_:)` ignores it (it calls every observer where it runs).
    /// The record holds that actor until the observer leaves (or is found deallocated): an actor
    /// that owns both this observable and the observer removes the observer before it can go.
    ///
    /// Thread safety: safe from any thread. The observer and its isolation are recorded in one
    /// critical section.
    /// Callbacks: on success, `observer.didSubscribe(to: self)` then
    /// `self.observer(observer, didSubscribe: true)`, once each, with no lock held, in the order
    /// this observable's changes took effect (see "Callback order" in the file header): before
    /// this returns, unless it was called from inside a callback of this observable or while
    /// another thread delivers them (then they follow the running callback).
    /// - Returns: `observer` if it was added; `nil` if it was already subscribed (nothing fires,
    ///   and its recorded isolation stays).
    /// - Complexity: expected O(1) (amortized; an occasional O(n) sweep drops deallocated
    ///   observers, and the first change made while a broadcast is running copies the list).
    @inlinable
    @discardableResult
    public func addObserver<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)? = #isolation
    ) -> Observer? {
        let node = graphNode
        let (outcome, turn, dropped) = _insertObserver(
            observer, isolation: isolation, queueing: true, node: node)
        if dropped { node._releaseDroppedActors() }
        guard case .inserted(let sweepDue) = outcome else { return nil }
        if turn {
            observer.didSubscribe(to: self)
            self.observer(observer, didSubscribe: true)
            _deliverQueuedCallbacks(on: node)
        }
        if sweepDue { node._sweepDeadObservers() }
        return observer
    }

    /// `subscribe` for the kit's own observers, whose callbacks are no-ops (the events layer calls
    /// it while holding a lock of its own): the callbacks fire at once, outside this observable's
    /// callback order, and two chores that may run a deinit are left to the caller, which must do
    /// them after unlocking: the occasional sweep for deallocated observers when `sweepDue` (it
    /// loads weak references, and releasing what it loaded may run a deinit), and
    /// `graphNode._releaseDroppedActors()` when `releaseDue` (actor references this node's
    /// records let go of).
    @inlinable
    func _subscribeDeferringSweep<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)? = nil
    ) -> (added: Bool, sweepDue: Bool, releaseDue: Bool) {
        let (outcome, _, dropped) = _insertObserver(observer, isolation: isolation, queueing: false)
        guard case .inserted(let sweepDue) = outcome else { return (false, false, dropped) }
        observer.didSubscribe(to: self)
        self.observer(observer, didSubscribe: true)
        return (true, sweepDue, dropped)
    }

    /// Inserts the edge in one critical section. With `queueing`, the same critical section
    /// takes this observable's callback turn (`turn == true`: the caller fires the callbacks,
    /// then delivers what was queued meanwhile) or, when a delivery is running, queues them.
    /// `dropped`: the node's actor records let go of a reference, which the caller releases with
    /// `_releaseDroppedActors()` once it holds no lock.
    @inlinable
    func _insertObserver<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)?, queueing: Bool, node: GraphNode? = nil
    ) -> _InsertResult {
        let node = node ?? graphNode
        let result = _insertObserverOnce(observer, isolation: isolation, queueing: queueing, node: node)
        // Refused by the entry of a tracking observer that is gone while its node is not yet (an
        // observer filed under its identity, added as it is deallocated): that edge goes first,
        // on both sides. Rare.
        guard case .present(nil) = result.outcome else { return result }
        return _insertObserverAfterDeadEdge(observer, isolation: isolation, queueing: queueing, node: node)
    }

    /// `_insertObserver` refused by a dead tracking observer's edge: removes it, then tries once
    /// more. Out of line (and not inlinable), so that the usual path stays small.
    @usableFromInline @inline(never)
    func _insertObserverAfterDeadEdge<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)?, queueing: Bool, node: GraphNode
    ) -> _InsertResult {
        // Tried again also when the edge was gone already (the tracker's node went meanwhile);
        // a live entry refuses it as before.
        _ = node._removeDeadEdge(observer._graphEdgeKey)
        return _insertObserverOnce(observer, isolation: isolation, queueing: queueing, node: node)
    }

    /// `_insertObserver`, refused (`.present(nil)`) where a dead tracking observer's edge holds
    /// the key.
    @inlinable
    func _insertObserverOnce<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)?, queueing: Bool, node: GraphNode
    ) -> _InsertResult {
        guard Observer.self is AnyObject.Type else {
            return _insertValueObserver(observer, isolation: isolation, queueing: queueing, node: node)
        }
        // The observer's reference is borrowed, not copied (a copy is a retain and a release,
        // which are slow on an object that has weak references): the slot refers to it weakly,
        // and the caller holds it until this returns.
        let reference = unsafeBitCast(observer, to: Unmanaged<AnyObject>.self)
        if let trackerNode = observer._graphTrackingNodeFromClass {
            let trackerKey = ObserverID(trackerNode)
            let selfKey = ObserverID(node)
            let result: _InsertResult = reference._withUnsafeGuaranteedRef { object in
                GraphNode._withEdge(observable: node, tracker: trackerNode) {
                    observers, subscriptions, callbacks, isolations, _ in
                    // Refused before either side is filed when the tracker's list is full (an
                    // edge entry never stays on one side).
                    guard subscriptions.hasRoom else { return (.present(object), false, false) }
                    let outcome = observers.insert(
                        key: trackerKey, object: object, flags: _SlotFlags.tracking, box: nil)
                    guard case .inserted = outcome else { return (outcome, false, false) }
                    let dropped =
                        isolation == nil && isolations == nil
                        ? false
                        : _NodeIsolation.record(
                            isolation, for: trackerKey, in: &isolations, observers: observers)
                    // The tracker's list files this node by address alone (no reference to the
                    // observable: see `GraphNode._owner`, recorded here once).
                    if !node._ownerRecorded {
                        node._owner = self
                        node._ownerRecorded = true
                        node._hadEdges = true
                    }
                    if !trackerNode._hadEdges { trackerNode._hadEdges = true }
                    // Present here only if inconsistent, which the edge lock rules out.
                    _ = subscriptions.insert(selfKey)
                    guard queueing else { return (outcome, false, dropped) }
                    return (outcome, callbacks.admit(observer, subscribed: true, removed: nil), dropped)
                }
            }
            return result
        }
        let key = observer.observerID
        return reference._withUnsafeGuaranteedRef { object in
            node._state.withLock { state in
                state.insertObserver(
                    observer, key: key, object: object, flags: 0, box: nil, isolation: isolation,
                    queueing: queueing)
            }
        }
    }

    /// `_insertObserver` of a struct observer, which a box holds.
    @inlinable
    func _insertValueObserver<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)?, queueing: Bool, node: GraphNode
    ) -> _InsertResult {
        let key = observer.observerID
        let box = _ValueObserverBox(observer)
        let object: AnyObject = box
        let flags = _SlotFlags.boxed
        return node._state.withLock { state in
            state.insertObserver(
                observer, key: key, object: object, flags: flags, box: box, isolation: isolation,
                queueing: queueing)
        }
    }

    /// Removes `observer`.
    ///
    /// For a tracking observer, this observable leaves its `subscriptions` in the same critical
    /// section. An observer whose `observerID` is a tracking observer's (a struct standing for
    /// it, say) is that observer to this observable: removing it removes the tracker's edge on
    /// both sides, and the callbacks name the observer passed here.
    ///
    /// Thread safety: safe from any thread. See the file header for removals made while a
    /// broadcast runs.
    /// Callbacks: on success, `observer.didUnsubscribe(from: self)` then
    /// `self.observer(observer, didSubscribe: false)`, once each, with no lock held, in the order
    /// this observable's changes took effect (as for `addObserver(_:)`).
    /// - Returns: `observer` if it was removed; `nil` if it was not subscribed (nothing fires).
    /// - Complexity: expected O(1) (amortized).
    @inlinable
    @discardableResult
    public func removeObserver<Observer: GraphObserver>(_ observer: Observer) -> Observer? {
        let trackerNode = observer._graphTrackingNodeFromClass
        let key = trackerNode == nil ? observer.observerID : ObserverID(_raw: 0)
        return _removeObserver(observer, trackerNode: trackerNode, key: key) ? observer : nil
    }

    /// Removes the edge to `observer`, filed under `trackerNode` for a tracking observer, else
    /// under `key` (where a tracking observer's entry is removed with its second side, see
    /// `_removeTrackingEdge`), and fires (or queues) its callbacks; `false` if it was not there. A caller
    /// `holdingTurn` keeps the turn (and gives it back itself, with `_deliverQueuedCallbacks`).
    @inlinable
    func _removeObserver<Observer: GraphObserver>(
        _ observer: Observer, trackerNode: GraphNode?, key: ObserverID, holdingTurn: Bool = false
    ) -> Bool {
        let node = graphNode
        let found: Bool
        let removed: _Removed?
        let now: Bool
        /// Whether the node's actor records let go of a reference (see `_NodeIsolation.dropped`).
        let dropped: Bool
        if Observer.self is AnyObject.Type {
            // The observer is known by its address, without copying its reference (see
            // `_insertObserver`); when the entry is this very object, the removal carries
            // nothing out.
            let address = unsafeBitCast(observer, to: Unmanaged<AnyObject>.self).toOpaque()
            if let trackerNode {
                (found, removed, now, dropped) = GraphNode._detachEdge(
                    observable: node, tracker: trackerNode, held: address
                ) {
                    $1.admit(observer, subscribed: false, removed: $0, holdingTurn: holdingTurn)
                }
            } else {
                (found, removed, now, dropped) = node._state.withLock { state in
                    let (found, removed) = state.observers.remove(
                        key: key, heldAt: address, sparingTracking: true)
                    let dropped = state.isolation?.forget(key, observers: state.observers) ?? false
                    guard found else { return (false, removed, false, dropped) }
                    state.broadcasts.noteRemoval()
                    let now = state.callbacks.admitOutOfLine(
                        observer, subscribed: false, removed: removed, holdingTurn: holdingTurn)
                    return (true, removed, now, dropped)
                }
            }
        } else {
            // Only classes track (`GraphTrackingObserver: AnyObject`): a struct is filed under `key`.
            assert(trackerNode == nil, "ObserverGraph: a struct observer filed as a tracking one")
            (found, removed, now, dropped) = node._state.withLock { state in
                let removed = state.observers.remove(key: key, sparingTracking: true)
                let dropped = state.isolation?.forget(key, observers: state.observers) ?? false
                guard let removed, !removed.spared else { return (false, removed, false, dropped) }
                state.broadcasts.noteRemoval()
                let now = state.callbacks.admitOutOfLine(
                    observer, subscribed: false, removed: removed, holdingTurn: holdingTurn)
                return (true, removed, now, dropped)
            }
        }
        if dropped { node._releaseDroppedActors() }
        guard found else {
            guard let removed, removed.spared else { return false }
            return _removeTrackingEdge(observer, standingFor: removed.object, holdingTurn: holdingTurn)
        }
        if now { _fireRemoval(of: observer, releasing: removed, holdingTurn: holdingTurn, on: node) }
        return true
    }

    /// The callbacks of a removal whose caller took the turn, then what was queued meanwhile
    /// (unless the caller keeps the turn); `removed` is released after the callbacks, with no
    /// lock held.
    @inlinable @inline(__always)
    func _fireRemoval<Observer: GraphObserver>(
        of observer: Observer, releasing removed: consuming _Removed?, holdingTurn: Bool, on node: GraphNode
    ) {
        observer.didUnsubscribe(from: self)
        self.observer(observer, didSubscribe: false)
        withExtendedLifetime(removed) {}
        if !holdingTurn { _deliverQueuedCallbacks(on: node) }
    }

    /// `_removeObserver` of an observer filed under the identity of a live tracking observer
    /// that it is not (a stand-in whose `observerID` is the tracker's): to this observable it is
    /// that tracker, so the edge goes on both sides, as the tracker's own removal takes it. The
    /// callbacks name `observer`, the one removed. Rare: not specialized.
    @usableFromInline
    func _removeTrackingEdge<Observer: GraphObserver>(
        _ observer: Observer, standingFor tracker: AnyObject, holdingTurn: Bool
    ) -> Bool {
        guard let trackerNode = (tracker as? any GraphObserver)?._graphTrackingNodeOrCast else {
            return false
        }
        let node = graphNode
        // `tracker` is held here, so it may be passed as the held object (see `_detachEdge`).
        let (found, removed, now, dropped) = withExtendedLifetime(tracker) {
            GraphNode._detachEdge(
                observable: node, tracker: trackerNode, held: Unmanaged.passUnretained(tracker).toOpaque()
            ) {
                $1.admit(observer, subscribed: false, removed: $0, holdingTurn: holdingTurn)
            }
        }
        if dropped { node._releaseDroppedActors() }
        guard found else { return false }
        if now { _fireRemoval(of: observer, releasing: removed, holdingTurn: holdingTurn, on: node) }
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
            state.callbacks.takeTurn()
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
            guard let observer = _graphObserver(object, bits: slot.bits) else { continue }
            // The slot says how the observer is filed: only a tracking one needs its node.
            let trackerNode = slot.bits & _SlotFlags.tracking != 0 ? observer._graphTrackingNodeOrCast : nil
            if _removeObserver(observer, trackerNode: trackerNode, key: slot.key, holdingTurn: turn) {
                result.append(observer)
            }
        }
        if turn { _deliverQueuedCallbacks() }
        if sawDead { graphNode._sweepDeadObservers(sampleFirst: false) }
        return result
    }

    /// Delivers the callbacks queued on this observable while this thread had the turn, until
    /// none is left; then gives the turn back. Runs with no lock held.
    @usableFromInline
    func _deliverQueuedCallbacks() {
        _deliverQueuedCallbacks(on: graphNode)
    }

    /// `_deliverQueuedCallbacks()` for a caller that has this observable's node at hand.
    @usableFromInline
    func _deliverQueuedCallbacks(on node: GraphNode) {
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
    @inlinable
    public func hasObserver<Observer: GraphObserver>(_ observer: Observer) -> Bool {
        let node = graphNode
        if Observer.self is AnyObject.Type, observer._graphTrackingNode == nil {
            // A class observer whose protocol hook says "not tracking" is filed under its
            // `observerID`, unless its class adopted `GraphTrackingObserver` below (then under
            // its node). A live entry under that key is this observer (two observers with one
            // `ObserverID` are the same observer): found without reading its class.
            let key = observer.observerID
            let (live, mayHoldTracking) = node._state.withLock {
                ($0.observers.liveObject(for: key), $0.observers.mayHoldTracking)
            }
            if live != nil { return true }
            // Its class is only looked at when this observable may have a tracking observer at
            // all: reading the class is a memory fetch of the observer, which an absent lookup
            // otherwise never makes. The class check reads the class from the reference (no copy
            // of it) and answers from the cache when it can.
            guard mayHoldTracking, !_graphIsKnownPlainClass(ObjectIdentifier(type(of: observer))),
                let object = observer._graphObjectIfClass,
                let trackerNode = _graphDynamicTrackingNode(object)
            else { return false }
            let trackerKey = ObserverID(trackerNode)
            return node._state.withLock { $0.observers.liveObject(for: trackerKey) } != nil
        }
        let key = observer._graphEdgeKey
        let live: AnyObject? = node._state.withLock { $0.observers.liveObject(for: key) }
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
            if let object = slot.object, let observer = _graphObserver(object, bits: slot.bits) {
                result.append(observer)
            }
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
    /// removal returns. If `body` throws, the broadcast stops and throws the same error, typed
    /// as `body`'s (`Never` for a body that does not throw: no `try`).
    ///
    /// Thread safety: safe from any thread, including concurrently with itself.
    /// Callbacks: `body` only.
    /// - Returns: how many observers `body` was called with.
    /// - Complexity: O(n), n = number of observers; no allocation per observer. Casting to a
    ///   class type is cheapest; casting to a protocol uses the runtime's conformance cache.
    @inlinable
    @discardableResult
    public func broadcast<T, Failure: Error>(
        as type: T.Type = T.self, _ body: (T) throws(Failure) -> Void
    ) throws(Failure) -> Int {
        try graphNode._broadcast(as: type, body)
    }
}

// MARK: - Posting to observers on their actors

/// What `post(as:isolation:_:)` did with one message.
///
/// Thread safety: a value type; `Sendable`.
/// Callbacks: none.
/// - Complexity: O(1) for every member.
public struct GraphPostResult: Sendable, Equatable, CustomStringConvertible {
    /// Observers called before `post` returned: those with no isolation (called on the posting
    /// thread) and those that live on the posting actor.
    public var delivered: Int
    /// Observers whose call was queued on their own actor. Each is called there exactly once, in
    /// post order, unless it leaves (or is deallocated) first or is not a `T` there.
    public var enqueued: Int
    /// Observers called here that are not a `T`. An observer added with no isolation whose
    /// conformance to `T` is isolated to an actor is not a `T` off that actor, so it is counted
    /// here: add it from its actor (or with `isolation:`) so that posts reach it there.
    public var skipped: Int

    /// A result with the given counts.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(delivered: Int = 0, enqueued: Int = 0, skipped: Int = 0) {
        self.delivered = delivered
        self.enqueued = enqueued
        self.skipped = skipped
    }

    /// `delivered 2, enqueued 1, skipped 0`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        "delivered \(delivered), enqueued \(enqueued), skipped \(skipped)"
    }
}

extension GraphObservable {
    /// Calls `body` with each current observer that is a `T`, each on its own actor: the typed
    /// broadcast for Swift concurrency.
    ///
    ///     // anywhere, on any thread or actor:
    ///     wallet.post(as: (any WalletObserver).self) { $0.creditsChanged(to: credits) }
    ///
    /// Where each observer is called depends on the isolation recorded when it was added
    /// (`addObserver(_:isolation:)`, by default the adding code's actor):
    /// - no isolation: called here, on the posting thread, before `post` returns;
    /// - the posting actor (`isolation`, by default the caller's): called here, before `post`
    ///   returns, after any earlier posts still queued for it. A post with no isolation made by
    ///   code running on the main actor (a nonisolated function called there, a block on the
    ///   main queue, a nonisolated observer's callback there) counts as the main actor's;
    /// - another actor: queued in a first-in, first-out mailbox per actor, drained on that actor
    ///   by one task at a time. There, the observer's actor-isolated conformances are visible, so
    ///   a `@MainActor` view model with `@MainActor WalletObserver` is a `T`.
    ///
    /// So each observer receives the posts in the order they were made (per posting thread), each
    /// exactly once, on its actor. An observer removed before its queued call runs is not called
    /// (a removal made on its actor takes effect at once). A post made on an actor while that
    /// actor is running this node's queued posts (from inside `body`) is queued behind them.
    ///
    /// Thread safety: safe from any thread or actor. `body` is `@Sendable`, so what it captures
    /// crosses to the observers' actors safely.
    /// Callbacks: `body`, once per observer that is a `T`, where described above.
    /// - Returns: how many observers were called here, queued elsewhere, or skipped.
    /// - Complexity: O(n) for n observers, plus one allocation per post for each other actor.
    @discardableResult
    public func post<T>(
        as type: T.Type = T.self, isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping @Sendable (T) -> Void
    ) -> GraphPostResult {
        graphNode._post(as: type, from: isolation, body)
    }
}

/// What an insert's critical section hands out: the outcome, whether the caller has the callback
/// turn, and whether the node's actor records let go of a reference (see `_NodeIsolation.dropped`).
@usableFromInline
typealias _InsertResult = (outcome: _InsertOutcome, turn: Bool, dropped: Bool)

/// The per-node record of observers' actors and the mailboxes of posts queued for them.
/// Guarded by the node's lock; allocated on the first observer added with an isolation.
@usableFromInline
final class _NodeIsolation {
    /// When set, every observer filed in the node's registry was added with this actor (the
    /// usual case: all of a node's observers live on the main actor), and `actors` is empty.
    /// Recording such an observer then costs a comparison, where a dictionary entry cost a
    /// random memory access per subscribe and unsubscribe once the node has many observers.
    /// It goes when no observer is filed any more; an observer deallocated without leaving
    /// stays filed (and so keeps this, as its own record would) until a sweep, broadcast or
    /// post drops it, since liveness cannot be checked under the lock (a tracking observer's
    /// entry: until its node goes, see `_Registry.dropDead`).
    @exclusivity(unchecked) var sole: (any Actor)? {
        didSet { soleIdentity = sole.map { ObjectIdentifier($0) } }
    }
    /// `sole`'s identity, compared without copying (retaining) the actor reference.
    @exclusivity(unchecked) private(set) var soleIdentity: ObjectIdentifier?
    /// The actor of each observer that was added with one, by edge key, while `sole` is `nil`.
    /// (Both dictionaries are used only under the node's lock, so their exclusive access is not
    /// checked again at run time, which cost two checks per subscribe and unsubscribe.)
    @exclusivity(unchecked) var actors: [_IsolationKey: any Actor] = [:]
    /// Posts waiting for an actor, by the actor's identity.
    @exclusivity(unchecked) var mailboxes: [ObjectIdentifier: _PostMailbox] = [:]

    /// Actor references the records let go of under the node's lock. The last release of an
    /// actor runs its deinit, which is the app's code, so they wait here until the code that let
    /// go of them has unlocked and calls `GraphNode._releaseDroppedActors()`.
    @exclusivity(unchecked) var dropped: [any Actor] = []

    /// Records `actor` (or none) for `key`, just filed in `observers`.
    /// - Returns: whether a reference went to `dropped` (a stale record's, or `sole`'s).
    @usableFromInline
    static func record(
        _ actor: (any Actor)?, for key: ObserverID, in isolation: inout _NodeIsolation?,
        observers: borrowing _Registry
    ) -> Bool {
        if let actor {
            if let isolation, isolation.soleIdentity == ObjectIdentifier(actor) { return false }
            if isolation == nil { isolation = _NodeIsolation() }
            return isolation?.record(actor, for: key, observers: observers) ?? false
        }
        guard let isolation else { return false }
        if let sole = isolation.sole {
            isolation.spill(sole, except: key, observers: observers)
            isolation.dropped.append(sole)
            return true
        }
        // A record under `key` is stale: a deallocated observer's, whose entry this one replaced
        // (it took its address). Removed here, not with `forget`, which keeps the records of
        // keys still filed, as `key` now is: the new observer inherited the old one's actor.
        guard !isolation.actors.isEmpty,
            let stale = isolation.actors.removeValue(forKey: _IsolationKey(key._raw))
        else { return false }
        isolation.dropped.append(stale)
        return true
    }

    private func record(_ actor: any Actor, for key: ObserverID, observers: borrowing _Registry) -> Bool {
        if let sole {
            if sole === actor { return false }
            spill(sole, except: key, observers: observers)
            actors[_IsolationKey(key._raw)] = actor
            dropped.append(sole)
            return true
        }
        if actors.isEmpty, observers.filedCount == 1 {
            sole = actor  // the only observer
            return false
        }
        guard let stale = actors.updateValue(actor, forKey: _IsolationKey(key._raw)) else { return false }
        dropped.append(stale)
        return true
    }

    /// Removes the mailbox of the actor `key` once it is idle (nothing pending, no drain on its
    /// way or running), so that the node does not keep an actor it no longer posts to.
    /// - Returns: the mailbox removed, whose actor reference the caller releases after
    ///   unlocking (see `dropped`).
    func removeIdleMailbox(_ key: ObjectIdentifier) -> _PostMailbox? {
        guard let mailbox = mailboxes[key], mailbox.pending.isEmpty, !mailbox.scheduled, !mailbox.running
        else { return nil }
        return mailboxes.removeValue(forKey: key)
    }

    /// Leaves the `sole` mode: every observer filed, but `key`, gets a record of `sole`. Runs
    /// once per change of mode, which only a registry down to one entry returns to.
    private func spill(_ sole: any Actor, except key: ObserverID, observers: borrowing _Registry) {
        self.sole = nil
        for slot in observers.slots.indices {
            let raw = observers.slots[slot].bits & _SlotFlags.keyMask
            if raw != 0, raw != key._raw { actors[_IsolationKey(raw)] = sole }
        }
    }

    /// The actor recorded for the entry with these bits, if any.
    @inline(__always)
    static func actor(forBits bits: UInt64, sole: (any Actor)?, actors: [_IsolationKey: any Actor])
        -> (any Actor)?
    {
        if let sole { return sole }
        if actors.isEmpty { return nil }
        return actors[_IsolationKey(bits & _SlotFlags.keyMask)]
    }

    /// Forgets the record of `key` if `observers` no longer files it (a removal may have left
    /// it filed: a tracker's entry spared for a stand-in, a stand-in added while its tracker
    /// died): in the `sole` mode, the node's actor once no observer is left.
    /// - Returns: whether a reference went to `dropped`.
    @usableFromInline
    func forget(_ key: ObserverID, observers: borrowing _Registry) -> Bool {
        if let sole {
            guard observers.filedCount == 0 else { return false }
            self.sole = nil
            dropped.append(sole)
            return true
        }
        if actors.isEmpty || observers.position(of: key._raw) != nil { return false }
        guard let actor = actors.removeValue(forKey: _IsolationKey(key._raw)) else { return false }
        dropped.append(actor)
        return true
    }
}

/// An observer's key in `_NodeIsolation.actors`. Its hash is a multiply and two shifts where
/// `ObserverID`'s is SipHash: the keys are addresses and counter values the kit makes, which need
/// mixing but no protection from chosen collisions, and SipHash (with the rehashing of a growing
/// dictionary) cost about 450 instructions per subscribe made from an actor, more than the rest
/// of the subscribe.
@usableFromInline
struct _IsolationKey: Hashable {
    let raw: UInt64

    init(_ raw: UInt64) { self.raw = raw }

    @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(raw) }

    /// The hash `Dictionary` places the key by (its low bits choose the bucket): the seed, so
    /// that each dictionary orders its keys its own way, then a multiplicative mix whose high
    /// half is folded into the low bits.
    @usableFromInline func _rawHashValue(seed: Int) -> Int {
        let mixed = (raw ^ UInt64(truncatingIfNeeded: seed)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 32))
    }
}

/// Asks the runtime whether the calling code runs on the main actor, for a post made with no
/// isolation (a nonisolated function called on the main actor, a block on the main queue): a
/// conformance isolated to the main actor is visible there only, so a cast to this probe's
/// succeeds there only. Such a post then calls the main actor's observers at once, as a post
/// made from main-actor code does, instead of on the actor's next turn.
///
/// On Apple platforms the main thread is asked first: a runtime older than isolated conformances
/// would let the cast succeed on any thread. So there, a block of the main queue run by another
/// thread (a program that parked the main thread in `dispatchMain()`) posts through the mailbox,
/// as does code on the main thread under a custom main executor (the cast fails there): the
/// observers are then called on the actor's next turn, never off it.
///
/// Thread safety: callable from any thread.
@MainActor
final class _MainActorProbe: @MainActor _MainActorProbeConformance {
    /// The one probe (its initializer does nothing, on any thread).
    nonisolated static let shared: any AnyObject & Sendable = _MainActorProbe()
    /// The main actor's identity, as the nodes record it.
    nonisolated static let identity = ObjectIdentifier(MainActor.shared)

    nonisolated init() {}

    /// The requirement's witness, never called.
    func _probe() {}

    /// Whether the caller runs on the main actor. Asked once per post with no isolation.
    /// - Complexity: O(1): one cached conformance lookup and an executor check.
    nonisolated static func isCurrent() -> Bool {
        #if canImport(Darwin)
            guard pthread_main_np() != 0 else { return false }
        #endif
        return shared is any _MainActorProbeConformance
    }
}

/// What `_MainActorProbe` conforms to, isolated to the main actor. It has a requirement: the
/// runtime does not check the isolation of a conformance to a protocol with none (the cast then
/// succeeds on every thread; seen on this toolchain).
protocol _MainActorProbeConformance {
    func _probe()
}

/// Posts queued for one actor, with the state of the task that drains them.
struct _PostMailbox {
    let actor: any Actor
    var pending: [_PendingPost] = []
    /// A task is on its way to drain this mailbox.
    var scheduled = false
    /// A drain is running on the actor right now (posts made from inside it queue behind it).
    var running = false
}

/// One post for the observers of one actor: their slots (weak) and the typed call.
struct _PendingPost {
    let targets: ContiguousArray<_Slot>
    /// Casts the object (on the actor) and calls the body; `false` when it is not a `T`.
    let deliver: @Sendable (AnyObject, UInt64) -> Bool
}

extension GraphNode {
    func _post<T>(as type: T.Type, from caller: (any Actor)?, _ body: @escaping @Sendable (T) -> Void)
        -> GraphPostResult
    {
        let deliver: @Sendable (AnyObject, UInt64) -> Bool = { object, bits in
            let target: T?
            if bits & _SlotFlags.boxed != 0 {
                target = unsafeDowncast(object, to: _ValueObserverBox.self).observer as? T
            } else {
                target = object as? T
            }
            guard let target else { return false }
            body(target)
            return true
        }
        // A post with no isolation made on the main actor (a nonisolated function called there,
        // a block on the main queue) is a post of the main actor, as if it had passed it.
        let onMainActor = caller == nil && _MainActorProbe.isCurrent()
        let callerKey = onMainActor ? _MainActorProbe.identity : caller.map { ObjectIdentifier($0) }
        // Earlier posts queued for the posting actor go first (it is this actor: run them now),
        // unless they are being run right now further up this stack.
        let callerBusy = callerKey.map { _flushPosts(for: $0) } ?? false
        var removedOnThisThread = false
        return withUnsafeMutablePointer(to: &removedOnThisThread) { flag in
            let (slots, layout, sole, actors) = _beginPost(flag)
            var dead: [_DeadEntry] = []
            defer { _endBroadcast(flag, layout: layout, count: slots.count, dead: dead) }
            var result = GraphPostResult()
            var queued: [ObjectIdentifier: (actor: any Actor, targets: ContiguousArray<_Slot>)] = [:]
            for position in slots.indices {
                let bits = slots[position].bits
                if bits == 0 { continue }
                if flag.pointee && !_isSubscribed(bits: bits) { continue }
                if let actor = _NodeIsolation.actor(forBits: bits, sole: sole, actors: actors) {
                    let key = ObjectIdentifier(actor)
                    if key != callerKey || callerBusy {
                        queued[key, default: (actor, [])].targets.append(slots[position])
                        result.enqueued += 1
                        continue
                    }
                }
                guard let object = slots[position].object else {
                    dead.append(_DeadEntry(position: position, bits: bits))
                    continue
                }
                if deliver(object, bits) { result.delivered += 1 } else { result.skipped += 1 }
            }
            for (key, entry) in queued {
                _enqueuePost(
                    _PendingPost(targets: entry.targets, deliver: deliver), for: key, on: entry.actor)
            }
            return result
        }
    }

    /// The observers, the layout, and the observers' actors (`sole`, or by key), in one
    /// critical section.
    func _beginPost(_ flag: UnsafeMutablePointer<Bool>)
        -> (ContiguousArray<_Slot>, UInt, (any Actor)?, [_IsolationKey: any Actor])
    {
        let thread = _currentThreadID()
        return _state.withLock { state in
            state.broadcasts.begin(_ActiveBroadcast(thread: thread, flag: flag))
            return (
                state.observers.slots, state.observers.layout, state.isolation?.sole,
                state.isolation?.actors ?? [:]
            )
        }
    }

    /// Queues `post` for `actor`; starts a task to drain the mailbox unless one is on its way or
    /// running.
    func _enqueuePost(_ post: _PendingPost, for key: ObjectIdentifier, on actor: any Actor) {
        let mustSchedule = _state.withLock { state -> Bool in
            if state.isolation == nil { state.isolation = _NodeIsolation() }
            guard let isolation = state.isolation else { return false }
            var mailbox = isolation.mailboxes[key] ?? _PostMailbox(actor: actor)
            mailbox.pending.append(post)
            let mustSchedule = !mailbox.scheduled && !mailbox.running
            if mustSchedule { mailbox.scheduled = true }
            isolation.mailboxes[key] = mailbox
            return mustSchedule
        }
        guard mustSchedule else { return }
        // On the main actor, the task starts there: a task of a nonisolated closure would start on
        // the shared pool of threads and wait for a free one before its hop.
        if actor === MainActor.shared {
            Task { @MainActor in self._drainPostsTask(key, isolation: MainActor.shared) }
        } else {
            Task { await self._drainPostsTask(key, isolation: actor) }
        }
    }

    /// The task's turn on the actor: it is no longer on its way; drain unless a drain runs.
    func _drainPostsTask(_ key: ObjectIdentifier, isolation actor: isolated any Actor) {
        _state.withLock { $0.isolation?.mailboxes[key]?.scheduled = false }
        _ = _flushPosts(for: key)
    }

    /// Runs the posts queued for the actor `key` until none is left. Must run on that actor.
    /// Returns `true` (and runs nothing) if a drain for it is already running further up the
    /// stack, so that the caller queues behind it.
    func _flushPosts(for key: ObjectIdentifier) -> Bool {
        let (busy, idle) = _state.withLock { state -> (Bool, _PostMailbox?) in
            guard let isolation = state.isolation, var mailbox = isolation.mailboxes[key] else {
                return (false, nil)
            }
            if mailbox.running { return (true, nil) }
            guard !mailbox.pending.isEmpty else { return (false, isolation.removeIdleMailbox(key)) }
            mailbox.running = true
            isolation.mailboxes[key] = mailbox
            return (false, nil)
        }
        withExtendedLifetime(idle) {}  // its actor reference is released here, with no lock held
        if busy { return true }
        while true {
            let (batch, idle) = _state.withLock { state -> ([_PendingPost], _PostMailbox?) in
                guard let isolation = state.isolation, var mailbox = isolation.mailboxes[key], mailbox.running
                else { return ([], nil) }
                let batch = mailbox.pending
                mailbox.pending = []
                if batch.isEmpty { mailbox.running = false }
                isolation.mailboxes[key] = mailbox
                return (batch, batch.isEmpty ? isolation.removeIdleMailbox(key) : nil)
            }
            withExtendedLifetime(idle) {}
            if batch.isEmpty { return false }
            for post in batch {
                for slot in post.targets {
                    // Removed since the post (on this actor, or before it ran): not called.
                    guard _isSubscribed(bits: slot.bits), let object = slot.object else { continue }
                    _ = post.deliver(object, slot.bits)
                }
            }
        }
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
    public func subscribe<Observer: GraphObserver>(
        _ observer: Observer, isolation: (any Actor)? = #isolation
    ) -> Observer? {
        addObserver(observer, isolation: isolation)
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

/// The lock held by a node's teardown (see `GraphNode`'s deinit) and by the readers of a
/// tracking observer's list: one at a time, so that a node an edge entry names by address is
/// not freed while one of them uses it (its own teardown, which removes that entry first, waits).
/// Taken before any node's lock, never while one is held. Reentrant on the thread holding it:
/// a reference a teardown drops may be a node's last, and that node's deinit then runs its own
/// teardown inside. What the teardowns release (observers, actors, nodes' states) is handed to
/// the outermost holder and released after unlocking, so no user code runs under it.
final class _GraphTeardownLock: @unchecked Sendable {
    /// How many times it was taken (a state of its own, which the lock guards).
    private let lock = GraphLock<UInt>(0)
    /// The thread holding `lock` (0: none) and what to release once it is unlocked.
    private let record = GraphLock<(holder: UInt, pending: [Any])>((0, []))

    func run<R>(_ body: () -> R) -> R {
        let thread = _currentThreadID()
        if record.withLock({ $0.holder == thread }) { return body() }
        let (result, pending) = lock.withLock { taken -> (R, [Any]) in
            taken &+= 1
            record.withLock { $0.holder = thread }
            let result = body()
            let pending = record.withLock { record -> [Any] in
                defer { record = (0, []) }
                return record.pending
            }
            return (result, pending)
        }
        withExtendedLifetime(pending) {}  // released here, with no lock held
        return result
    }

    /// Hands `value` to the outermost `run` of this thread, which releases it after unlocking.
    /// Only inside `run`.
    func releaseLater(_ value: Any) {
        record.withLock { $0.pending.append(value) }
    }
}

let _graphTeardown = _GraphTeardownLock()

/// The kit's storage for one object's edges: its observers (if it is observable) and its
/// subscriptions (if it is a tracking observer). Store exactly one per object, as a `let`.
///
/// When the node is deallocated (with its owner), every edge it had is removed from the other
/// side at once, without callbacks. A node that ever had a tracking edge does that under the
/// kit's teardown lock, one node at a time across the process (edge entries name the node at
/// the other end by address; the lock keeps it from being freed while it is used).
///
/// Thread safety: `Sendable`; all of its state is behind its own lock.
/// Callbacks: none.
/// - Complexity: O(1) to create; deallocation is O(edges).
public final class GraphNode: @unchecked Sendable {
    #if canImport(Darwin) || os(Windows) || !canImport(Synchronization) || OBSERVERGRAPH_NO_ATOMICS
        @usableFromInline let _state: GraphLock<_NodeState>
        /// Whether `_owner` was recorded; read and written only under this node's lock.
        @usableFromInline @exclusivity(unchecked) var _ownerRecorded = false
        /// Whether an edge entry was ever filed on this node (either side); under its lock.
        @usableFromInline @exclusivity(unchecked) var _hadEdges = false

        /// Creates an empty node.
        ///
        /// Thread safety: safe from any thread. Callbacks: none.
        /// - Complexity: O(1).
        public init() {
            _state = GraphLock(_NodeState())
        }
    #else
        // Where the lock is one atomic word, the node stores it and its state itself: an edge
        // change on a node that is not in the cache (a tracking observer's, typically) fetches
        // the node and finds its state there, where a `GraphLock` would be one more object to
        // fetch after it (and one more allocation per node). Same lock as `GraphLock`'s.
        @usableFromInline let _word = Atomic<UInt32>(0)
        /// Whether `_owner` was recorded; read and written only under this node's lock. (Here it
        /// fills the space between the word and the state.)
        @usableFromInline @exclusivity(unchecked) var _ownerRecorded = false
        /// Whether an edge entry was ever filed on this node (either side); under its lock.
        @usableFromInline @exclusivity(unchecked) var _hadEdges = false
        /// Read and written only while holding the lock (`_word`): no exclusivity check needed.
        @usableFromInline @exclusivity(unchecked) var _stateStorage = _NodeState()

        /// The node's state behind its lock, with the interface of a `GraphLock`.
        @inlinable var _state: _NodeStateLock { _NodeStateLock(node: self) }

        /// Creates an empty node.
        ///
        /// Thread safety: safe from any thread. Callbacks: none.
        /// - Complexity: O(1).
        public init() {}
    #endif

    /// The object this node belongs to as an observable (a node belongs to one object: see
    /// `GraphObservable.graphNode`), recorded when a tracking observer first subscribes to it: a tracker's list files this node by address, without a reference
    /// count or a weak reference per edge, and reaches the observable through this. Written
    /// once, under this node's lock and the first tracker's; read under the lock of a tracker
    /// whose list files this node (that filing happened after the write, under that lock).
    @usableFromInline @exclusivity(unchecked) weak var _owner: AnyObject?

    deinit {
        // Edge entries (a tracking observer's, on either side) name the node at the other end by
        // address, without a reference count, so every one of them must be removed, on both
        // sides, before this node's memory goes. Nobody else can reach this node any more, and
        // nobody can add an edge to it (that takes a reference to it); the lock only orders our
        // reads after the writes other threads made under it.
        //
        // A node that ever had an edge entry takes the teardown lock even with none left: a
        // teardown that just removed its last one may still be using it.
        guard _state.withLock({ _ in _hadEdges }) else { return }
        _graphTeardown.run {
            _graphTeardown.releaseLater(_tearDownEdges())
            // The state goes after unlocking too: it may hold struct observers and actors.
            _graphTeardown.releaseLater(
                _state.withLock { state in
                    defer { state = _NodeState() }
                    return state
                })
        }
    }

    /// Removes, on both sides, every edge entry of this node (which is being deinitialized).
    /// Under the teardown lock (`_GraphTeardownLock`): the node at the other end of each entry is not freed
    /// before its own teardown, which needs that lock and removes the same entries first, so
    /// its address is safe to use here (see `_withPeer`).
    /// - Returns: what the removals took out (observer references, actors the other nodes'
    ///   records let go of, the other nodes retained), to be released after unlocking.
    private func _tearDownEdges() -> [Any] {
        let (trackers, observables) = _state.withLock { state in
            (
                state.observers.slots.filter { $0.bits & _SlotFlags.tracking != 0 }.map(\.key),
                state.subscriptions.keys
            )
        }
        var carried: [Any] = []
        // This node as an observable: each tracking observer's list drops it. (An entry may be
        // gone, with its node, if a deinit ran inside this teardown: see `_withPeer`.)
        for trackerKey in trackers
        where _state.withLock({ $0.observers.hasTrackingEntry(trackerKey) }) {
            GraphNode._withPeer(at: trackerKey) {
                GraphNode._removeEdge(observable: self, tracker: $0, into: &carried)
            }
        }
        // This node as a tracking observer: each observable it is subscribed to drops it.
        for observableKey in observables
        where _state.withLock({ $0.subscriptions.contains(observableKey) }) {
            GraphNode._withPeer(at: observableKey) {
                GraphNode._removeEdge(observable: $0, tracker: self, into: &carried)
            }
        }
        return carried
    }

    /// Removes, on both sides, the edge of the tracking observer filed under `trackerKey` if that
    /// observer is gone while its node is not (yet): for an observer filed under the same key.
    /// - Returns: whether it did.
    /// - Complexity: O(1) expected.
    @usableFromInline @inline(never)
    func _removeDeadEdge(_ trackerKey: ObserverID) -> Bool {
        var carried: [Any] = []
        let removed = _graphTeardown.run { () -> Bool in
            // Under the teardown lock, the tracker's node is not freed while this node's entry
            // names it. A live object found there is carried out: releasing it may run a deinit.
            let dead = _state.withLock { state -> Bool in
                guard let position = state.observers.position(of: trackerKey._raw),
                    state.observers.slots[position].bits & _SlotFlags.tracking != 0
                else { return false }
                let object = state.observers.slots[position].loadObject()
                if let object { carried.append(object) }
                return object == nil
            }
            guard dead else { return false }
            GraphNode._withPeer(at: trackerKey) {
                GraphNode._removeEdge(observable: self, tracker: $0, into: &carried)
            }
            return true
        }
        withExtendedLifetime(carried) {}  // released with no lock held
        return removed
    }

    /// Removes the edge observable → tracker on both sides, whatever the tracker's entry holds
    /// (live, dead, or gone): for a teardown, under the teardown lock. Only the tracker's own
    /// entry on the observable's side: an observer filed under its identity while it was dying
    /// (a stand-in, see `removeObserver`) is another edge. What it takes out (the tracker, if
    /// alive; actors the observable's records let go of) goes to `carried`.
    static func _removeEdge(observable: GraphNode, tracker: GraphNode, into carried: inout [Any]) {
        let trackerKey = ObserverID(tracker)
        let observableKey = ObserverID(observable)
        _withEdge(observable: observable, tracker: tracker) {
            observers, subscriptions, _, isolation, broadcasts in
            if let removed = observers.remove(key: trackerKey, onlyTracking: true) {
                carried.append(removed)
                broadcasts.noteRemoval()
            }
            if let isolation, isolation.forget(trackerKey, observers: observers) {
                carried.append(isolation.dropped)
                isolation.dropped = []
            }
            subscriptions.drop(key: observableKey)
        }
    }

    /// The node whose address `key` is (an edge entry's key). Only while that node is known not
    /// to be freed (see `_withPeer`).
    static func _node(at key: ObserverID) -> Unmanaged<GraphNode>? {
        guard let address = UnsafeRawPointer(bitPattern: UInt(truncatingIfNeeded: key._raw)) else {
            return nil
        }
        return Unmanaged<GraphNode>.fromOpaque(address)
    }

    /// Runs `body` with the node an edge entry names by `key`, under the teardown lock (see
    /// `_GraphTeardownLock`): that node is not freed meanwhile, since its teardown would wait for
    /// the lock. It is retained for `body`, so that no reference `body` drops is its last; the
    /// retain is dropped after `body`, with no node lock held: if it is the last, the node's
    /// deinit runs there, inside the teardown lock (a node being deallocated elsewhere is not
    /// ended twice: its count only goes back to where it was).
    static func _withPeer<R>(at key: ObserverID, _ body: (GraphNode) -> R) -> R? {
        guard let peer = _node(at: key) else { return nil }
        _ = peer.retain()
        defer { peer.release() }
        return peer._withUnsafeGuaranteedRef(body)
    }

    /// The observables named by `subscriptions` (a tracking observer's list, its node locked by
    /// the caller, under the teardown lock), in order, `nil` for a vacant entry or a
    /// deallocated observable; each named node is retained into `peers`, which the caller
    /// releases after unlocking, still under the teardown lock (see `_withPeer`).
    static func _owners(of subscriptions: _SubscriptionList, retaining peers: inout [Unmanaged<GraphNode>])
        -> [AnyObject?]
    {
        subscriptions.entryKeys.map { key -> AnyObject? in
            guard key != 0, let peer = _node(at: ObserverID(_raw: key)) else { return nil }
            peers.append(peer.retain())
            return peer._withUnsafeGuaranteedRef { $0._owner }
        }
    }

    /// The observables this node's subscription entries name, in subscription order (`nil` for a
    /// vacant entry or a deallocated observable): strong references, which the caller releases.
    /// - Complexity: O(n), n = number of subscription slots.
    @usableFromInline
    func _subscriptionObjects() -> [AnyObject?] {
        _graphTeardown.run {
            var peers: [Unmanaged<GraphNode>] = []
            let objects = _state.withLock { GraphNode._owners(of: $0.subscriptions, retaining: &peers) }
            for peer in peers { peer.release() }
            return objects
        }
    }

    /// Runs `body` with the observable's observer registry, the tracker's subscription list,
    /// the observable's callback queue, isolation record and running broadcasts, both nodes locked (in address order, so two threads
    /// never deadlock).
    ///
    /// Inlinable, so that a subscribe specialized in a client calls no generic function here:
    /// unspecialized, the result type's metadata is looked up and the result returned
    /// indirectly on every call.
    @inlinable @inline(__always)
    static func _withEdge<R>(
        observable: GraphNode, tracker: GraphNode,
        _ body: (
            inout _Registry, inout _SubscriptionList, inout _CallbackQueue, inout _NodeIsolation?,
            inout _BroadcastList
        ) -> R
    ) -> R {
        if observable === tracker {
            return observable._state.withLock {
                body(&$0.observers, &$0.subscriptions, &$0.callbacks, &$0.isolation, &$0.broadcasts)
            }
        }
        if ObjectIdentifier(observable) < ObjectIdentifier(tracker) {
            return observable._state.withLock { o in
                tracker._state.withLock { t in
                    body(&o.observers, &t.subscriptions, &o.callbacks, &o.isolation, &o.broadcasts)
                }
            }
        }
        return tracker._state.withLock { t in
            observable._state.withLock { o in
                body(&o.observers, &t.subscriptions, &o.callbacks, &o.isolation, &o.broadcasts)
            }
        }
    }

    /// Removes the edge observable → tracker on both sides at once; `found` is `false` if it was
    /// not there. `held` is the address of the tracking observer, which the caller holds (see
    /// `_Registry.remove(key:heldAt:)`). `admit` runs in the same critical section when the edge was removed (see `_CallbackQueue`);
    /// the tracker's recorded isolation is forgotten in it too.
    @usableFromInline
    static func _detachEdge(
        observable: GraphNode, tracker: GraphNode, held: UnsafeMutableRawPointer,
        admit: (_Removed?, inout _CallbackQueue) -> Bool
    ) -> (found: Bool, removed: _Removed?, turn: Bool, dropped: Bool) {
        let trackerKey = ObserverID(tracker)
        let observableKey = ObserverID(observable)
        return _withEdge(observable: observable, tracker: tracker) {
            observers, subscriptions, callbacks, isolation, broadcasts in
            // The tracker's entry is found first, so that the memory fetch of its list (in
            // random order, rarely in the cache) overlaps with the search of the observable's
            // index instead of following it. Removing from `observers` leaves it where it is.
            let place = subscriptions.locate(observableKey)
            let (found, removed) = observers.remove(key: trackerKey, heldAt: held)
            let dropped = isolation?.forget(trackerKey, observers: observers) ?? false
            // The tracker's side holds no reference: nothing to carry out. It goes also when the
            // entry removed above was dead (a tracker removing itself in its deinit): an edge
            // entry never stays on one side (see `_SlotFlags.tracking`).
            if let place { subscriptions.drop(at: place) }
            guard found else { return (false, nil, false, dropped) }
            broadcasts.noteRemoval()
            return (true, removed, admit(removed, &callbacks), dropped)
        }
    }

    /// Releases the actor references the node's records let go of (`_NodeIsolation.dropped`),
    /// with no lock held: for the code that let go of them, after unlocking.
    @usableFromInline @inline(never)
    func _releaseDroppedActors() {
        let dropped = _state.withLock { state -> [any Actor] in
            guard let isolation = state.isolation, !isolation.dropped.isEmpty else { return [] }
            defer { isolation.dropped = [] }
            return isolation.dropped
        }
        withExtendedLifetime(dropped) {}
    }

    /// The sweep a subscribe found due (see `_Registry.insert`): drops entries of deallocated
    /// observers. In a registry of at least `_SweepSample.minimumSlots` slots it first loads a
    /// sample of the entries, one at random in each of `_SweepSample.size` equal stretches, and
    /// loads every entry only if at least an eighth of the sampled ones are dead. A weak load
    /// takes and drops a strong reference (atomic operations on the observer's side table, which
    /// lies wherever the observer's first weak reference allocated it): where observers
    /// subscribed in another order than that, a full pass over a large registry costs a cache
    /// miss per entry, and a growing registry whose observers leave by unsubscribing paid about
    /// one per subscribe for nothing.
    @usableFromInline
    func _sweepDeadObservers() {
        _sweepDeadObservers(sampleFirst: true)
    }

    /// Drops entries of deallocated observers (see `_sweepDeadObservers()`); `sampleFirst: false`
    /// loads every entry whatever the registry's size. Liveness is read outside the lock, so that
    /// no object can be released (and its deinit run) while the lock is held.
    func _sweepDeadObservers(sampleFirst: Bool) {
        let (slots, layout) = _state.withLock { ($0.observers.slots, $0.observers.layout) }
        var dead: [_DeadEntry] = []
        var full = true
        if sampleFirst && slots.count >= _SweepSample.minimumSlots {
            var random = _SweepSample.Generator(
                seed: UInt64(UInt(bitPattern: ObjectIdentifier(self))) ^ UInt64(slots.count) ^ UInt64(layout))
            var filed = 0
            // Stretch bounds in 64 bits: `stretch * count` overflows a 32-bit `Int` from 2^25
            // slots on.
            let count = UInt64(slots.count)
            let size = UInt64(_SweepSample.size)
            for stretch in 0..<size {
                let start = stretch * count / size
                let end = (stretch + 1) * count / size
                let position = Int(truncatingIfNeeded: start + random.next() % (end - start))
                let bits = slots[position].bits
                guard bits != 0 else { continue }
                filed += 1
                if slots[position].loadObject() == nil {
                    dead.append(_DeadEntry(position: position, bits: bits))
                }
            }
            // Fewer than half the sample filed (holes, which compaction keeps below half of the
            // slots): too few for an estimate, so the full pass.
            full = filed < _SweepSample.size / 2 || dead.count * 8 >= filed
            if full { dead.removeAll(keepingCapacity: true) }
        }
        if full {
            for position in slots.indices {
                let bits = slots[position].bits
                if bits != 0 && slots[position].loadObject() == nil {
                    dead.append(_DeadEntry(position: position, bits: bits))
                }
            }
        }
        let dropped = _state.withLock { state -> Bool in
            var dropped = false
            if !dead.isEmpty {
                state.observers.dropDead(dead, layout: layout, count: slots.count)
                dropped = state.forgetIsolationOfUnregistered(dead)
            }
            // After a full pass, the next sweep is due when the registry reaches four times its
            // filed size, so the dead entries a sweep drops stay within three times the others,
            // whatever the history (and the sweeps cost O(1) amortized per subscribe). The others
            // are the live entries and dead tracking observers' entries, which stay until their
            // nodes go (`dropDead`). After a sample that found under an eighth dead, the next
            // sweep is due when the slots double. Under 30% were dead then, but for a small chance
            // (3 in 10,000 with 64 filed entries sampled, 5 in 1,000 with 32, the fewest that
            // count; where half are dead, 4 in 10^11 and 1 in 10^6), and at most all of the new
            // ones die meanwhile: at most 65% of the slots, under twice the others. A sample that
            // erred is followed by a fresh one at the next doubling.
            let filed = state.observers.slots.count - state.observers.vacant
            state.observers.sweepMark = max(64, full ? 4 * filed : 2 * state.observers.slots.count)
            return dropped
        }
        if dropped { _releaseDroppedActors() }
    }

    @inlinable @inline(__always)
    func _broadcast<T, Failure: Error>(
        as type: T.Type, _ body: (T) throws(Failure) -> Void
    ) throws(Failure) -> Int {
        // Set (on this thread only) when an observer is removed from this node on this thread
        // while the broadcast runs: from then on each observer is re-checked before its call.
        var removedOnThisThread = false
        return try withUnsafeMutablePointer(to: &removedOnThisThread) { flag throws(Failure) -> Int in
            let (slots, layout) = _beginBroadcast(flag)
            var dead: [_DeadEntry] = []
            defer { _endBroadcast(flag, layout: layout, count: slots.count, dead: dead) }
            var delivered = 0
            for position in slots.indices {
                let bits = slots[position].bits
                if bits == 0 { continue }
                if flag.pointee && !_isSubscribed(bits: bits) { continue }
                guard let object = slots[position].loadObject() else {
                    dead.append(_DeadEntry(position: position, bits: bits))
                    continue
                }
                if bits & _SlotFlags.boxed == 0 {
                    // `object` has no use after the cast, so its reference moves into `target`:
                    // one strong reference per delivery, as in a hand-written weak loop.
                    guard let target = (consume object) as? T else { continue }
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
            state.broadcasts.begin(_ActiveBroadcast(thread: thread, flag: flag))
            return (state.observers.slots, state.observers.layout)
        }
    }

    /// `_beginBroadcast` for a caller that keeps its own list of the observers: the slots only
    /// when entries were added or removed since that list was read at generation `known`.
    @usableFromInline
    func _beginBroadcast(_ flag: UnsafeMutablePointer<Bool>, unlessGeneration known: UInt?) -> (
        slots: ContiguousArray<_Slot>?, layout: UInt, generation: UInt
    ) {
        let thread = _currentThreadID()
        return _state.withLock { state in
            state.broadcasts.begin(_ActiveBroadcast(thread: thread, flag: flag))
            let generation = state.observers.extras().generation
            return (known == generation ? nil : state.observers.slots, state.observers.layout, generation)
        }
    }

    /// Makes `watcher` this node's registry extras, which hear of every change of its
    /// observers (see `_RegistryExtras.registryChanged()`): one object for both.
    @usableFromInline
    func _watchObservers(_ watcher: _RegistryExtras) {
        _state.withLock { $0.observers.adoptExtras(watcher) }
    }

    /// The observer slots and their layout, for a layer that keeps its own list of them.
    @usableFromInline
    func _observerSlots() -> (slots: ContiguousArray<_Slot>, layout: UInt) {
        _state.withLock { ($0.observers.slots, $0.observers.layout) }
    }

    /// Drops entries a reader of `_observerSlots` found dead (see `_Registry.dropDead`: `layout`
    /// and `count` are those of the slots it read).
    @usableFromInline
    func _dropDead(_ dead: [_DeadEntry], layout: UInt, count: Int) {
        let dropped = _state.withLock { state in
            state.observers.dropDead(dead, layout: layout, count: count)
            return state.forgetIsolationOfUnregistered(dead)
        }
        if dropped { _releaseDroppedActors() }
    }

    /// Ends a broadcast begun with `_beginBroadcast` or `_beginPost`, dropping the entries it
    /// found dead (`layout` and `count`: those of the slots it read, see `_Registry.dropDead`).
    @usableFromInline
    func _endBroadcast(_ flag: UnsafeMutablePointer<Bool>, layout: UInt, count: Int, dead: [_DeadEntry]) {
        let dropped = _state.withLock { state -> Bool in
            state.broadcasts.end(flag)
            guard !dead.isEmpty else { return false }
            state.observers.dropDead(dead, layout: layout, count: count)
            return state.forgetIsolationOfUnregistered(dead)
        }
        if dropped { _releaseDroppedActors() }
    }

    @usableFromInline
    func _isSubscribed(bits: UInt64) -> Bool {
        _state.withLock { $0.observers.contains(bits: bits) }
    }
}

#if !(canImport(Darwin) || os(Windows) || !canImport(Synchronization) || OBSERVERGRAPH_NO_ATOMICS)
    /// A node's state and the lock word stored in the node (see `GraphNode`), used as a
    /// `GraphLock<_NodeState>` is: the same lock, taken and released inline.
    @usableFromInline
    struct _NodeStateLock {
        @usableFromInline let node: GraphNode

        @inlinable init(node: GraphNode) { self.node = node }

        @inlinable @inline(__always)
        func withLock<Result, Failure: Error>(
            _ body: (inout _NodeState) throws(Failure) -> Result
        ) throws(Failure) -> Result {
            _graphLockAcquire(node._word, parkingFor: node)
            defer { _graphLockRelease(node._word, parkingFor: node) }
            return try body(&node._stateStorage)
        }

        @inline(__always) func _lockUnscoped() { _graphLockAcquire(node._word, parkingFor: node) }
        @inline(__always) func _unlockUnscoped() { _graphLockRelease(node._word, parkingFor: node) }
        /// A copy of the state; only while holding the lock.
        var _stateWhileLocked: _NodeState { node._stateStorage }
    }
#endif

// MARK: - Storage internals

@usableFromInline
enum _SlotFlags {
    /// The slot's object is a `_ValueObserverBox` holding a struct observer.
    @inlinable static var boxed: UInt64 { 2 }
    /// An edge entry: in an observable's observers, a tracking observer (its key is the
    /// observer's node); in a tracking observer's subscriptions, every entry (its key is the
    /// observable's node, and its object is `nil`: see `GraphNode._owner`; a lone subscription
    /// is a key alone, see `_SubscriptionList`). An edge entry goes
    /// only with its edge, on both sides at once, never as dead: the node at the other end is
    /// not freed while it is there (see `GraphNode`'s deinit).
    @inlinable static var tracking: UInt64 { 4 }
    @inlinable static var keyMask: UInt64 { ~UInt64(6) }
}

/// One entry of a registry: a weak reference and the entry's key with its flags.
/// `bits == 0` marks a vacant slot (keys are never zero).
@usableFromInline
struct _Slot {
    @usableFromInline weak var object: AnyObject?
    @usableFromInline var bits: UInt64

    @inlinable init(object: AnyObject?, bits: UInt64) {
        self.object = object
        self.bits = bits
    }

    @inlinable var key: ObserverID { ObserverID(_raw: bits & _SlotFlags.keyMask) }

    /// `object`, read where the slot lies. Kept out of line on purpose: where `slots[i].object`
    /// is inlined, the optimizer first copies the whole slot (a weak reference copy and destroy,
    /// two atomic operations on the object's side table) and loads from the copy.
    @usableFromInline @inline(never)
    func loadObject() -> AnyObject? { object }
}

/// Holds a struct observer, so that slots can refer to it weakly like to any object.
@usableFromInline
final class _ValueObserverBox {
    @usableFromInline let observer: any GraphObserver
    @usableFromInline init(_ observer: any GraphObserver) { self.observer = observer }
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

/// The sample a due sweep loads first in a large registry (see `GraphNode._sweepDeadObservers`).
enum _SweepSample {
    /// Entries loaded: one in each of this many equal stretches of the slots.
    static let size = 64
    /// Smaller registries are swept in full: the sample would be a quarter of them or more.
    static let minimumSlots = 4 * size

    /// SplitMix64: where in each stretch the sampled entry lies. Seeded from the node and the
    /// registry's state; the sample needs spread, not secrecy.
    struct Generator {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }
}

/// An entry a reader found dead (its object deallocated), to be dropped under the lock.
@usableFromInline
struct _DeadEntry {
    let position: Int
    let bits: UInt64
    @usableFromInline init(position: Int, bits: UInt64) {
        self.position = position
        self.bits = bits
    }
}

/// What a removal took out: the strong references are released by the caller after unlocking
/// (`_Registry.remove(key:heldAt:)` takes nothing out when the caller holds the object itself).
/// `spared`: nothing was removed; `object` is the live tracking observer filed under the key,
/// whose edge has a second side (see `_Registry.remove(key:sparingTracking:)`).
@usableFromInline
struct _Removed {
    @usableFromInline let object: AnyObject
    let box: _ValueObserverBox?
    @usableFromInline var spared = false
}

@usableFromInline
enum _InsertOutcome {
    case inserted(sweepDue: Bool)
    /// Already present; carries the live object so that it is released after unlocking (`nil`
    /// for an edge entry whose object is gone, which stays until its edge is removed).
    case present(AnyObject?)
}

@usableFromInline
struct _NodeState {
    // Ten words: with the object header, the lock word and the owner record, a node is 112
    // bytes on Linux (see `_Registry`). A copy read after unlocking must call `detachExtras()`
    // on both lists first (see `GraphNode._captureLocked`): they hold reference-type storage
    // that the node mutates in place.
    /// First, so that on Linux (where the node stores its lock word before its state) a tracking
    /// observer's subscribe and unsubscribe touch one line of its node (see `_SubscriptionList`).
    @usableFromInline var subscriptions = _SubscriptionList()
    @usableFromInline var observers = _Registry()
    /// The broadcasts running on `observers`.
    @usableFromInline var broadcasts = _BroadcastList()
    /// Where observers added from an actor live, and posts waiting for those actors; `nil` until
    /// the first observer is added with an isolation.
    @usableFromInline var isolation: _NodeIsolation?
    @usableFromInline var callbacks = _CallbackQueue()
    @usableFromInline init() {}

    /// The critical section of a plain or struct observer's subscribe: files `observer` under
    /// `key` (`object` held weakly; `box` holds a struct), records its isolation and, with
    /// `queueing`, admits its callbacks.
    @inlinable
    mutating func insertObserver<Observer: GraphObserver>(
        _ observer: Observer, key: ObserverID, object: AnyObject, flags: UInt64, box: _ValueObserverBox?,
        isolation actor: (any Actor)?, queueing: Bool
    ) -> _InsertResult {
        let outcome = observers.insert(key: key, object: object, flags: flags, box: box)
        guard case .inserted = outcome else { return (outcome, false, false) }
        // A nonisolated caller on a node with no actor records, the usual case: nothing to record.
        let dropped =
            actor == nil && isolation == nil
            ? false : _NodeIsolation.record(actor, for: key, in: &isolation, observers: observers)
        guard queueing else { return (outcome, false, dropped) }
        return (outcome, callbacks.admit(observer, subscribed: true, removed: nil), dropped)
    }

    /// Forgets the isolation of dead entries that a sweep dropped (not of a key that was added
    /// again meanwhile: that one has its own, newer isolation).
    /// - Returns: whether the records let go of an actor reference (see `_NodeIsolation.dropped`).
    mutating func forgetIsolationOfUnregistered(_ dead: [_DeadEntry]) -> Bool {
        guard let isolation else { return false }
        var dropped = false
        for entry in dead where observers.index[ObserverID(_raw: entry.bits & _SlotFlags.keyMask)] == nil {
            let key = ObserverID(_raw: entry.bits & _SlotFlags.keyMask)
            if isolation.forget(key, observers: observers) { dropped = true }
        }
        return dropped
    }
}

/// The broadcasts running on a node's observers, innermost last.
@usableFromInline
struct _BroadcastList {
    var running: [_ActiveBroadcast] = []

    @usableFromInline init() {}

    mutating func begin(_ broadcast: _ActiveBroadcast) {
        running.append(broadcast)
    }

    mutating func end(_ flag: UnsafeMutablePointer<Bool>) {
        // Broadcasts on one node nest, so this one is nearly always the last.
        if running.last?.flag == flag {
            running.removeLast()
        } else if let i = running.lastIndex(where: { $0.flag == flag }) {
            running.remove(at: i)
        }
    }

    /// An observer was removed: the broadcasts running on this thread must re-check each
    /// observer from now on.
    @usableFromInline
    func noteRemoval() {
        guard !running.isEmpty else { return }
        let thread = _currentThreadID()
        for broadcast in running where broadcast.thread == thread {
            broadcast.flag.pointee = true
        }
    }
}

/// The graph callbacks of one observable, in the order its edge changes took effect.
///
/// Each change is admitted in the critical section that makes it. If no thread is delivering
/// this observable's callbacks, the caller takes the turn and fires its callbacks itself, then
/// delivers whatever was queued meanwhile (`takeBatch` until `nil`, which gives the turn back).
/// Otherwise the change's callbacks are queued behind the running delivery: a change made inside
/// a callback (the reentrant case), or on another thread meanwhile, never overtakes an earlier
/// one. Nobody waits for anybody, so the queue cannot deadlock.
@usableFromInline
struct _CallbackQueue {
    /// `nil` while no thread has the turn; otherwise what is queued behind the thread that has
    /// it (one word, where a flag and an array took two: see `_Registry`).
    @usableFromInline var pending: [_PendingCallback]?

    @usableFromInline init() {}

    /// A thread has the turn.
    var delivering: Bool { pending != nil }

    /// Takes the turn if nobody has it; does nothing if it is held.
    @inlinable
    mutating func takeTurn() {
        if pending == nil { pending = [] }
    }

    /// `true`: the caller has the turn, and fires the callbacks now; `false`: they were queued.
    /// A caller already `holdingTurn` fires them now only if nothing is queued before them.
    ///
    /// Inlinable, so that taking a free turn (the usual case) costs a client a few instructions
    /// and no call; queueing behind a running delivery (the rare case) is a call (`queue`).
    @inlinable
    mutating func admit(
        _ observer: some GraphObserver, subscribed: Bool, removed: _Removed?, holdingTurn: Bool = false
    ) -> Bool {
        if holdingTurn ? pending?.isEmpty ?? true : pending == nil {
            takeTurn()
            return true
        }
        queue(observer, subscribed: subscribed, removed: removed)
        return false
    }

    /// `admit`, not inlined: for the removal of a plain or struct observer, whose critical
    /// section the compiler inlines into the caller only while it stays this small.
    @usableFromInline @inline(never)
    mutating func admitOutOfLine(
        _ observer: some GraphObserver, subscribed: Bool, removed: _Removed?, holdingTurn: Bool
    ) -> Bool {
        admit(observer, subscribed: subscribed, removed: removed, holdingTurn: holdingTurn)
    }

    /// Queues the callbacks of a change behind the thread that has the turn (see `admit`).
    @usableFromInline
    mutating func queue(_ observer: some GraphObserver, subscribed: Bool, removed: _Removed?) {
        var queued = pending ?? []
        pending = nil  // so that `queued` is the only reference and grows in place
        queued.append(_PendingCallback(observer: observer, subscribed: subscribed, removed: removed))
        pending = queued
    }

    /// What was queued, moved out (released by the caller, after unlocking); `nil` when nothing
    /// is, which gives the turn back.
    mutating func takeBatch() -> [_PendingCallback]? {
        // Checked in place: nothing queued is the usual case, and it needs no copy of the array.
        if pending?.isEmpty ?? true {
            pending = nil
            return nil
        }
        defer { pending = [] }
        return pending
    }
}

/// The callbacks of one change, waiting for their turn.
@usableFromInline
struct _PendingCallback {
    let observer: any GraphObserver
    let subscribed: Bool
    /// What a removal took out, kept until its callbacks have run.
    let removed: _Removed?
}

/// A tracking observer's list of the observables it is subscribed to: their nodes' addresses,
/// in subscription order, with no reference to them (see `GraphNode._owner`). A tracker with one
/// subscription, the usual case, keeps it in its node (`sole`), so that its subscribe and
/// unsubscribe touch no memory beyond its node; the second one moves the list into a registry
/// of its own (`more`), where it stays. A node that never tracks more than one observable at a
/// time (every observable's node, most trackers') holds 16 bytes for the list instead of a
/// registry's 40.
@usableFromInline
struct _SubscriptionList {
    /// The only entry's key while there is no `more`; 0 for none.
    @usableFromInline var sole: UInt64 = 0
    /// The entries once the list has held two at once (edge entries: no object, flagged
    /// `_SlotFlags.tracking`); `nil` before.
    @usableFromInline var more: _SubscriptionRegistry?

    @usableFromInline init() {}

    /// Whether `insert` has room for one more entry (see `_Registry.hasRoom`).
    @inlinable var hasRoom: Bool { more?.registry.hasRoom ?? true }

    /// Files `key` (a node's address) last.
    /// - Returns: `false` if it was filed already.
    /// - Complexity: expected O(1).
    @inlinable
    mutating func insert(_ key: ObserverID) -> Bool {
        if sole == 0 && more == nil {
            sole = key._raw
            return true
        }
        return insertInRegistry(key)
    }

    /// `insert` once the list needs `more`: the sole entry moves there first, keeping the order.
    @usableFromInline
    mutating func insertInRegistry(_ key: ObserverID) -> Bool {
        // The registry is reached through `more` each time (optional chaining), not through a
        // local copy of the reference: a copy is a retain and a release.
        if more == nil {
            if sole == key._raw { return false }
            more = _SubscriptionRegistry(_Registry())
        } else {
            assert(sole == 0, "ObserverGraph: a lone subscription beside a subscription registry")
        }
        let flags = _SlotFlags.tracking
        if sole != 0 {
            _ = more?.registry.insert(key: ObserverID(_raw: sole), object: nil, flags: flags, box: nil)
            sole = 0
        }
        guard case .inserted? = more?.registry.insert(key: key, object: nil, flags: flags, box: nil) else {
            return false
        }
        return true
    }

    /// Where `key` is filed: position -1 for the sole entry, else its place in `more`.
    func locate(_ key: ObserverID) -> (bucket: Int?, position: Int)? {
        if sole != 0 { return sole == key._raw ? (nil, -1) : nil }
        return more?.registry.locate(key)
    }

    /// Removes the entry that `locate` found, this list unchanged since.
    mutating func drop(at place: (bucket: Int?, position: Int)) {
        if place.position < 0 {
            sole = 0
        } else {
            more?.registry.drop(at: place)
        }
    }

    /// Removes `key` if it is filed.
    mutating func drop(key: ObserverID) {
        if let place = locate(key) { drop(at: place) }
    }

    /// Whether `key` is filed.
    func contains(_ key: ObserverID) -> Bool { locate(key) != nil }

    /// Each entry's key, in order, as raw bits; 0 for a vacant slot of `more`.
    var entryKeys: [UInt64] {
        if sole != 0 { return [sole] }
        return more?.registry.slots.map { $0.bits & _SlotFlags.keyMask } ?? []
    }

    /// The keys filed, in order.
    var keys: [ObserverID] { entryKeys.filter { $0 != 0 }.map { ObserverID(_raw: $0) } }

    /// Gives this copy a registry of its own (see `_Registry.detachExtras`): for a copy that is
    /// read after unlocking, while the node's own list goes on changing.
    mutating func detachExtras() {
        guard let more else { return }
        var registry = more.registry
        registry.detachExtras()
        self.more = _SubscriptionRegistry(registry)
    }

    /// Every internal inconsistency of this list, as text (empty when consistent).
    func violations() -> [String] {
        guard let more else {
            return sole & ~_SlotFlags.keyMask != 0 ? ["the sole entry has flags"] : []
        }
        var problems = more.registry.violations()
        if sole != 0 { problems.append("a sole entry beside a registry") }
        for slot in more.registry.slots where slot.bits != 0 && slot.bits & _SlotFlags.tracking == 0 {
            problems.append("entry \(slot.key) is not an edge entry")
        }
        return problems
    }
}

/// The registry of a `_SubscriptionList` that has held two entries at once. A class, so that
/// the list takes two words in its node (a registry inline takes five); mutated in place, only
/// under that node's lock, so a copy of the list must get its own (`detachExtras`).
@usableFromInline
final class _SubscriptionRegistry {
    @usableFromInline @exclusivity(unchecked) var registry: _Registry

    @usableFromInline init(_ registry: _Registry) { self.registry = registry }
}

/// An ordered set of weakly referenced objects with O(1) lookup by key: the registration-order
/// slot array (vacated slots are compacted away once they are half of it; in a short registry,
/// a vacant last slot, such as an emptied registry's sole slot, is refilled by the next insert)
/// and an index from key to slot position (`_SlotIndex`), built once the registry outgrows a
/// short scan.
@usableFromInline
struct _Registry {
    // Five words: a node's lock and state fit in 112 bytes on Linux, so that an edge change on a
    // node that is not in the cache, such as a tracking observer's, costs one or two memory
    // fetches for its state (a tracker's lone subscription is next to the lock there: see
    // `_SubscriptionList`; a tracker's registry of two or more is one more). What few
    // registries need lives in `_RegistryExtras`, allocated on first use.
    @usableFromInline var slots = ContiguousArray<_Slot>()
    /// Key to position; empty (no allocation) while `slots` is short enough to scan.
    var table = _SlotIndex()
    /// Vacated slots in the low 31 bits (at most `capacityLimit`); in the top bit, whether a
    /// tracking entry was added since the registry was last empty.
    private var vacantAndTracking: UInt32 = 0
    /// Slot count at which the next sweep for deallocated objects is due.
    private var sweepMarkCount: UInt32 = 64
    /// Changes whenever slot positions change (compaction: the high half, `positionsMoved`) or
    /// the vacant last slot is refilled (the low half), so that a reader's stale positions are
    /// detected (see `dropDead`).
    @usableFromInline var layout: UInt = 0
    /// Boxes and the generation (in a watcher, see `GraphNode._watchObservers`); `nil` until
    /// one is needed.
    private var rare: _RegistryExtras?

    /// What a compaction adds to `layout` (a refill adds 1): one unit of its high half, 2^32
    /// where `UInt` has 64 bits and 2^16 where it has 32 (watchOS on arm64_32 and armv7k). A
    /// refill count that outgrows the low half carries into the high one, which only makes a
    /// reader drop nothing.
    static var positionsMoved: UInt { 1 << (UInt.bitWidth / 2) }
    /// Holes are compacted away once they make up this share of the slots (numerator over 4).
    static let compactionQuarters = 2
    /// The most entries a registry takes: positions and the index's reach stay within 32 bits.
    static let capacityLimit = Int(Int32.max) - 1

    @usableFromInline init() {}

    /// Vacated slots not compacted away yet (at most `capacityLimit`, so 32 bits hold it).
    var vacant: Int {
        get { Int(vacantAndTracking & Self.vacantMask) }
        set {
            vacantAndTracking = vacantAndTracking & ~Self.vacantMask | UInt32(truncatingIfNeeded: newValue)
        }
    }

    private static var vacantMask: UInt32 { 0x7FFF_FFFF }

    /// Entries filed, live or left by a deallocated object not swept yet.
    var filedCount: Int { slots.count - vacant }

    /// `false` when the registry surely holds no tracking entry (none was added since it was
    /// last empty), so that a query need not find out whether an observer is a tracking one.
    @usableFromInline
    var mayHoldTracking: Bool { vacantAndTracking & ~Self.vacantMask != 0 }

    /// Slot count at which the next sweep is due (saturates at `UInt32.max`, which is never
    /// reached: the registry refuses entries before that).
    var sweepMark: Int {
        get { Int(sweepMarkCount) }
        set { sweepMarkCount = UInt32(clamping: newValue) }
    }

    /// The extras, allocated now if needed.
    mutating func extras() -> _RegistryExtras {
        if let rare { return rare }
        let made = _RegistryExtras()
        rare = made
        return made
    }

    /// Makes `extras` (fresh, of a watcher) the extras, taking over the boxes and the generation
    /// of the present ones.
    mutating func adoptExtras(_ extras: _RegistryExtras) {
        assert(extras.boxes.isEmpty, "ObserverGraph: extras adopted with boxes of their own")
        if let rare {
            assert(type(of: rare) == _RegistryExtras.self, "ObserverGraph: a node watched twice")
            extras.boxes = rare.boxes
            extras.generation = rare.generation
        }
        rare = extras
    }

    /// Gives this copy extras of its own, holding the boxes and the generation as they are now
    /// (no watcher), so that it shares nothing with the registry it was copied from: for a copy
    /// that is read after unlocking. Under the lock of the registry's node.
    mutating func detachExtras() {
        guard let rare else { return }
        let own = _RegistryExtras()
        own.boxes = rare.boxes
        own.generation = rare.generation
        self.rare = own
    }

    /// The boxes of struct observers (empty when none was ever added).
    var boxes: [ObserverID: _ValueObserverBox] { rare?.boxes ?? [:] }

    /// An entry was added or vacated: the generation moves and the watcher hears of it.
    @inline(__always)
    private func noteChange() {
        guard let rare else { return }
        rare.generation &+= 1
        rare.registryChanged()
    }

    /// The position of the entry filed under `raw` (a key without flags), if any.
    @inline(__always)
    func position(of raw: UInt64) -> Int? {
        if table.isEmpty {
            for position in slots.indices where slots[position].bits & _SlotFlags.keyMask == raw {
                return position
            }
            return nil
        }
        return table.find(raw, in: slots)?.position
    }

    /// `object` is `nil` only for the entry of a tracker's subscription (an edge entry, see
    /// `_SlotFlags.tracking`).
    @usableFromInline
    mutating func insert(key: ObserverID, object: AnyObject?, flags: UInt64, box: _ValueObserverBox?)
        -> _InsertOutcome
    {
        // Over two billion entries: refused like a duplicate.
        guard slots.count < Self.capacityLimit else { return .present(object) }
        let raw = key._raw
        let end = slots.count
        // Whether the entry of a deallocated object with the same identity was vacated (its
        // object's address taken by this one): that hole is compacted like a removal's.
        var replacedDead = false
        if table.isEmpty {
            if let old = position(of: raw) {
                if let existing = slots[old].loadObject() { return .present(existing) }
                // An edge entry goes only with its edge, on both sides.
                if slots[old].bits & _SlotFlags.tracking != 0 { return .present(nil) }
                vacate(old)  // left by a deallocated object that had the same identity
                replacedDead = true
            }
            if vacant != 0 && slots[end &- 1].bits == 0 {
                // A short list only: in an indexed one a hole at the end is rare, and the check
                // cost every subscribe a few instructions more than it saved.
                refillLast(object: object, bits: raw | flags)
            } else {
                slots.append(_Slot(object: object, bits: raw | flags))
                if slots.count > _SlotIndex.scanLimit { table.rebuild(from: slots) }
            }
        } else {
            table.reserveOne(count: slots.count - vacant)
            let probe = table.probe(raw, in: slots)
            if let old = probe.position {
                if let existing = slots[old].loadObject() { return .present(existing) }
                if slots[old].bits & _SlotFlags.tracking != 0 { return .present(nil) }
                vacate(old)
                replacedDead = true
                table.repoint(probe.bucket, to: end)
            } else {
                table.fill(probe.bucket, raw: raw, position: end)
            }
            slots.append(_Slot(object: object, bits: raw | flags))
        }
        if let box { extras().boxes[key] = box }
        if flags & _SlotFlags.tracking != 0 { vacantAndTracking |= ~Self.vacantMask }
        // Else observers that die while subscribed, each new one at a dead one's address, leave
        // a hole per subscribe: the slots grow without end, and a sweep (which finds nothing
        // dead, the new observer being alive) is due at every subscribe.
        if replacedDead { compactIfNeeded() }
        noteChange()
        var sweepDue = false
        if slots.count >= sweepMark {
            sweepMark = slots.count * 2
            sweepDue = true
        }
        _checkInvariants()
        return .inserted(sweepDue: sweepDue)
    }

    /// Removes `key`; returns the live object (and box) it held, or `nil` if it was absent or
    /// its object is gone. With `sparingTracking` (for an observer that is not filed as a
    /// tracking one), the entry of a live tracking observer stays, and comes back `spared`: its
    /// edge has a second side, in the tracker's list, which only `GraphNode._detachEdge` removes
    /// with it.
    /// With `onlyTracking`, an entry that is not a tracking observer's stays, and `nil` is
    /// returned.
    @usableFromInline
    mutating func remove(key: ObserverID, sparingTracking: Bool = false, onlyTracking: Bool = false)
        -> _Removed?
    {
        if slots.count == 1 {
            guard slots[0].bits & _SlotFlags.keyMask == key._raw else { return nil }
            let bits = slots[0].bits
            if onlyTracking, bits & _SlotFlags.tracking == 0 { return nil }
            let object = slots[0].loadObject()
            if sparingTracking, bits & _SlotFlags.tracking != 0 {
                // A tracking observer's edge goes on both sides (a dead one's, with its node).
                guard let object else { return nil }
                return _Removed(object: object, box: nil, spared: true)
            }
            let box = bits & _SlotFlags.boxed != 0 ? rare?.boxes.removeValue(forKey: key) : nil
            removeSoleEntry()
            guard let object else { return nil }
            return _Removed(object: object, box: box)
        }
        let position: Int
        let bucket: Int?
        if table.isEmpty {
            guard let found = self.position(of: key._raw) else { return nil }
            (bucket, position) = (nil, found)
        } else {
            guard let found = table.find(key._raw, in: slots) else { return nil }
            (bucket, position) = (found.bucket, found.position)
        }
        let bits = slots[position].bits
        if onlyTracking, bits & _SlotFlags.tracking == 0 { return nil }
        let object = slots[position].loadObject()
        if sparingTracking, bits & _SlotFlags.tracking != 0 {
            guard let object else { return nil }
            return _Removed(object: object, box: nil, spared: true)
        }
        if let bucket { table.remove(at: bucket) }
        vacate(position)
        let box = bits & _SlotFlags.boxed != 0 ? rare?.boxes.removeValue(forKey: key) : nil
        compactIfNeeded()
        _checkInvariants()
        guard let object else { return nil }
        return _Removed(object: object, box: box)
    }

    /// `remove(key:)` for a caller that holds the object it removes, at address `held`: when the
    /// entry is that very object, the reference loaded to see that it is alive is released here,
    /// under the lock (no deinit can run: the caller's reference keeps the object alive), and
    /// nothing is carried out. `found` is whether a live entry was removed.
    /// `sparingTracking` as for `remove(key:sparingTracking:)`: a spared entry is not found, and
    /// is carried out.
    @usableFromInline
    mutating func remove(key: ObserverID, heldAt held: UnsafeMutableRawPointer, sparingTracking: Bool = false)
        -> (found: Bool, carry: _Removed?)
    {
        guard let removed = remove(key: key, sparingTracking: sparingTracking) else { return (false, nil) }
        if removed.spared { return (false, removed) }
        if removed.box == nil, Unmanaged.passUnretained(removed.object).toOpaque() == held {
            return (true, nil)
        }
        return (true, removed)
    }

    /// Where `key` is filed: its index bucket (when there is an index) and its position.
    func locate(_ key: ObserverID) -> (bucket: Int?, position: Int)? {
        if table.isEmpty {
            guard let position = position(of: key._raw) else { return nil }
            return (nil, position)
        }
        guard let found = table.find(key._raw, in: slots) else { return nil }
        return (found.bucket, found.position)
    }

    /// Removes the entry that `locate` found, this registry unchanged since, without loading its
    /// object (dropping a weak reference runs no deinit): for a tracker's list (see
    /// `_SubscriptionList`). Only for entries without a box: releasing a box here would release
    /// a user's value under the lock.
    mutating func drop(at place: (bucket: Int?, position: Int)) {
        assert(slots[place.position].bits & _SlotFlags.boxed == 0, "ObserverGraph: drop on a boxed entry")
        if slots.count == 1 {
            removeSoleEntry()
            return
        }
        if let bucket = place.bucket { table.remove(at: bucket) }
        vacate(place.position)
        compactIfNeeded()
        _checkInvariants()
    }

    @usableFromInline
    func liveObject(for key: ObserverID) -> AnyObject? {
        guard let position = position(of: key._raw) else { return nil }
        return slots[position].loadObject()
    }

    /// Whether `insert` has room for one more entry (it refuses one beyond `capacityLimit`,
    /// spelled out here so that an inlined check reads no global).
    @inlinable
    var hasRoom: Bool { slots.count < Int(Int32.max) - 1 }

    /// Whether a tracking observer's entry is filed under `key`.
    func hasTrackingEntry(_ key: ObserverID) -> Bool {
        guard let position = position(of: key._raw) else { return false }
        return slots[position].bits & _SlotFlags.tracking != 0
    }

    /// Whether the entry with exactly these bits is still registered.
    @usableFromInline
    func contains(bits: UInt64) -> Bool {
        guard let position = position(of: bits & _SlotFlags.keyMask) else { return false }
        return slots[position].bits == bits
    }

    /// Drops entries a reader found dead, if the positions it saw are still valid: `seen` is the
    /// layout and `count` the slot count of the reader's snapshot. A dead weak reference never
    /// revives, so equal bits at an equal position mean the same dead entry, unless the position
    /// was vacated and filled again since. Without a compaction (which moves positions: then
    /// nothing is dropped), only the last slot is ever refilled, and only a slot at or after the
    /// reader's last can have been: when the layout's refill count moved, entries from there on
    /// are skipped (a new entry there may repeat the dead one's bits: the same identity), and
    /// those before it are still dropped.
    ///
    /// A dead tracking observer's entry stays: its node, which may outlive it, still lists this
    /// registry's node, and removes the edge on both sides when it goes (its deinit). Dropping
    /// only this side would leave the node's list one-sided meanwhile.
    mutating func dropDead(_ dead: [_DeadEntry], layout seen: UInt, count: Int) {
        guard seen / Self.positionsMoved == layout / Self.positionsMoved else { return }
        let firstRefillable = seen == layout ? Int.max : count &- 1
        for entry in dead
        where entry.bits & _SlotFlags.tracking == 0 && entry.position < firstRefillable
            && slots[entry.position].bits == entry.bits
        {
            if !table.isEmpty, let found = table.find(entry.bits & _SlotFlags.keyMask, in: slots) {
                table.remove(at: found.bucket)
            }
            vacate(entry.position)
        }
        compactIfNeeded()
        _checkInvariants()
    }

    /// Removes the only slot (an observable's last observer, or a tracking observer's list back
    /// to one observable) by vacating it in place, where `removeLast` cost a generic call and a move of
    /// the weak reference before destroying it. The vacated slot stays until the next insert
    /// refills it (the only registry state in which every slot is vacant); no tracking entry is
    /// left, and positions do not change, so the layout does not either.
    private mutating func removeSoleEntry() {
        slots[0].object = nil
        slots[0].bits = 0
        vacantAndTracking = 1  // one hole, no tracking entry
        noteChange()
        _checkInvariants()
    }

    /// Fills the last slot of a short (unindexed) registry, vacant, with a new entry, which is
    /// last in registration order as an appended one would be: an entry removed and another
    /// added, as a tracker that churns one of its subscriptions does, leaves the slot count (and
    /// the buffer) as it was, where appending grew it by one until the next compaction. The
    /// layout's refill count moves: a reader that found the slot's last occupant dead skips
    /// that position (see `dropDead`).
    private mutating func refillLast(object: AnyObject?, bits: UInt64) {
        let last = slots.count &- 1
        slots[last].object = object
        slots[last].bits = bits
        vacant &-= 1
        layout &+= 1
    }

    private mutating func vacate(_ position: Int) {
        slots[position].object = nil
        slots[position].bits = 0
        vacantAndTracking &+= 1
        noteChange()
    }

    private mutating func compactIfNeeded() {
        guard vacant > 0 else { return }
        if vacant == slots.count {
            if slots.count <= 4 {
                // A short list emptied by the removal of dead entries: cheaper than `removeAll`.
                while !slots.isEmpty { slots.removeLast() }
            } else {
                slots.removeAll(keepingCapacity: slots.count <= 1024)
            }
            if !table.isEmpty { table = _SlotIndex() }
            vacantAndTracking = 0  // no hole, no tracking entry
            layout &+= Self.positionsMoved
            return
        }
        guard vacant >= 16, vacant * 4 >= slots.count * Self.compactionQuarters else { return }
        // Each run of live slots moves down over the holes before it, keeping order. A move
        // takes the weak references along (no copy, no reference count traffic), a run at a
        // time. When the buffer would stay over four times the live count, the runs move into
        // a buffer sized for them instead, which hands the memory back in the same pass.
        let live = slots.count - vacant
        var moved = _SlotMoves(runs: nil)  // replaced below (without the room a fresh one reserves)
        if slots.capacity > 4 * live {
            let fresh = ContiguousArray<_Slot>(unsafeUninitializedCapacity: live) { target, initialized in
                slots.withUnsafeMutableBufferPointer { source in
                    guard let from = source.baseAddress, let to = target.baseAddress else { return }
                    moved = Self.moveLiveSlots(from, count: source.count, to: to, inPlace: false)
                }
                initialized = moved.kept
            }
            slots = fresh  // the old buffer holds only vacant slots now
        } else if let run = Self.soleRun(of: slots, live: live) {
            // The live slots make one run, holes only around it (removals oldest first, or
            // newest first): the holes are removed, each destroyed once, and the run moves down
            // once. The general pass below makes each hole it moves over vacant again before
            // removing it: a destruction, an initialization and a destruction per hole.
            slots.removeSubrange(run.range.upperBound...)
            slots.removeSubrange(0..<run.range.lowerBound)
            moved = _SlotMoves()
            moved.kept = live
            moved.tracking = run.tracking
            moved.note(start: run.range.lowerBound, shift: run.range.lowerBound)
        } else {
            slots.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                moved = Self.moveLiveSlots(base, count: buffer.count, to: base, inPlace: true)
            }
            slots.removeSubrange(moved.kept...)
        }
        assert(moved.kept == live, "ObserverGraph: \(moved.kept) live slots, \(live) expected")
        // The index keeps its buckets (hashes do not depend on positions) unless it is far too
        // large for what is left or the moves are too scattered to look up cheaply: then it is
        // built again, one random write per entry.
        if live <= _SlotIndex.scanLimit || table.bucketCount > 8 * live || moved.runs == nil {
            table.rebuild(from: slots)
        } else if let runs = moved.runs, runs.contains(where: { $0.shift != 0 }) {
            table.shiftPositions(runs)
        }
        vacantAndTracking = moved.tracking == 0 ? 0 : ~Self.vacantMask  // no hole; tracking entries kept?
        layout &+= Self.positionsMoved
    }

    /// The positions of the `live` live slots when they make one run (holes only before and
    /// after it), with their tracking flag if any has it; `nil` otherwise (found at the first
    /// hole inside, so a scattered registry costs a short scan).
    private static func soleRun(of slots: ContiguousArray<_Slot>, live: Int)
        -> (range: Range<Int>, tracking: UInt64)?
    {
        slots.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var first = 0
            while first < buffer.count, base[first].bits == 0 { first += 1 }
            guard first + live <= buffer.count else { return nil }
            var tracking: UInt64 = 0
            for position in first..<(first + live) {
                let bits = base[position].bits
                if bits == 0 { return nil }
                tracking |= bits & _SlotFlags.tracking
            }
            return (first..<(first + live), tracking)
        }
    }

    /// Moves the live slots of `source[0..<count]` to `target`, in order and with no gap, a run
    /// (a stretch of live slots) at a time. `inPlace`: `target` is `source`, where the slots
    /// before each run are vacant (initialized) and are overwritten; else `target` is
    /// uninitialized memory. Every place a run leaves is initialized as a vacant slot again, so
    /// that `source` stays initialized throughout.
    private static func moveLiveSlots(
        _ source: UnsafeMutablePointer<_Slot>, count: Int, to target: UnsafeMutablePointer<_Slot>,
        inPlace: Bool
    ) -> _SlotMoves {
        var moved = _SlotMoves()
        var position = 0
        // Made once: a vacant slot made per run cost a weak reference's initialization and
        // assignment each time.
        let vacantSlot = _Slot(object: nil, bits: 0)
        while position < count {
            if source[position].bits == 0 {
                position += 1
                continue
            }
            let start = position
            while position < count, source[position].bits != 0 {
                moved.tracking |= source[position].bits & _SlotFlags.tracking
                position += 1
            }
            let length = position - start
            let destination = moved.kept
            moved.note(start: start, shift: start - destination)
            moved.kept += length
            guard !inPlace || destination != start else { continue }
            if inPlace {
                // The part of the destination before the run holds vacant slots; the rest is
                // the run itself (the regions may overlap).
                (target + destination).deinitialize(count: min(length, start - destination))
            }
            (target + destination).moveInitialize(from: source + start, count: length)
            let left = inPlace ? max(start, destination + length) : start
            (source + left).initialize(repeating: vacantSlot, count: position - left)
        }
        return moved
    }

    /// A read-only view of the index, for diagnostics: `index[key]` is the position of `key`.
    var index: _RegistryIndexView { _RegistryIndexView(registry: self) }

    /// Internal consistency of the registry, checked after every mutation in builds with
    /// `OBSERVERGRAPH_INTERNAL_CHECKS` (the package's debug builds): counts always, every entry
    /// when the registry is small enough for that to stay cheap.
    @inline(__always)
    func _checkInvariants() {
        #if OBSERVERGRAPH_INTERNAL_CHECKS
            if slots.count <= 256 {
                let problems = violations()
                precondition(problems.isEmpty, "ObserverGraph: \(problems)")
            }
        #endif
    }

    /// Every internal inconsistency of this registry, as text (empty when consistent).
    func violations() -> [String] {
        var problems: [String] = []
        if table.isEmpty && slots.count > _SlotIndex.scanLimit {
            problems.append("\(slots.count) slots but no index")
        }
        if !table.isEmpty && table.usedBuckets != slots.count - vacant {
            problems.append("index has \(table.usedBuckets) keys but \(slots.count - vacant) slots are used")
        }
        var used = 0
        var boxed = 0
        for position in slots.indices where slots[position].bits != 0 {
            used += 1
            let bits = slots[position].bits
            let key = ObserverID(_raw: bits & _SlotFlags.keyMask)
            if self.position(of: key._raw) != position {
                problems.append("slot \(position) (\(key)) is not indexed at its position")
            }
            if bits & _SlotFlags.tracking != 0 && !mayHoldTracking {
                problems.append("tracking slot \(position) but the registry says it holds none")
            }
            if bits & _SlotFlags.boxed != 0 {
                boxed += 1
                if boxes[key] == nil { problems.append("boxed slot \(position) has no box") }
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

/// What a registry needs only for struct observers or a watcher, kept apart so
/// that registries stay small (see `_Registry`). What is declared here is used only under the
/// owning node's lock, so its exclusive access is not checked again at run time (a watcher
/// subclass may add fields of its own that are not: see `_MembershipWatch`). A copy of a registry shares it with the
/// original: a copy that outlives the lock (the diagnostics' consistent cut) first gets extras of
/// its own (`detachExtras()`).
///
/// Not final: a layer that keeps its own list of a node's observers makes a subclass that hears
/// of every join and leave (`registryChanged()`), and installs it as the node's extras
/// (`GraphNode._watchObservers`), so that watching costs no object of its own.
@usableFromInline
class _RegistryExtras {
    /// Strong references to boxed struct observers (slots refer to the boxes weakly).
    @exclusivity(unchecked) final var boxes: [ObserverID: _ValueObserverBox] = [:]
    /// Changes whenever an entry is added or vacated once the extras exist, so that a reader
    /// keeping its own list of the entries (which reads this first, allocating the extras)
    /// knows when to read them again.
    @exclusivity(unchecked) final var generation: UInt = 0

    @usableFromInline init() {}

    /// Told of every change of `generation`, in the critical section that makes it: nothing
    /// here; a watcher's override (the kit's own code only: it runs under the node's lock, so
    /// it must not lock or call out).
    @usableFromInline func registryChanged() {}
}

/// `registry.index[key]`: the position `key` is filed at, or `nil`.
struct _RegistryIndexView {
    let registry: _Registry

    subscript(key: ObserverID) -> UInt32? {
        registry.position(of: key._raw).map { UInt32(truncatingIfNeeded: $0) }
    }
}

/// What a compaction moved: the live slot count, the tracking flags seen, and where each run of
/// live slots went (`shift` places down, from `start` on), or `nil` once there were too many
/// runs to look a position up in cheaply.
struct _SlotMoves {
    var kept = 0
    var tracking: UInt64 = 0
    /// Room for every run it can hold, taken at once: where holes are scattered (removals in
    /// random order), growing it run by run reallocated it six times per compaction.
    var runs: [(start: Int, shift: Int)]? = {
        var runs: [(start: Int, shift: Int)] = []
        runs.reserveCapacity(_SlotMoves.runLimit)
        return runs
    }()

    /// Beyond this many runs, the index is rebuilt rather than shifted.
    static let runLimit = 64

    mutating func note(start: Int, shift: Int) {
        guard runs != nil else { return }
        if runs?.count == Self.runLimit {
            runs = nil
        } else {
            runs?.append((start, shift))
        }
    }
}

/// A hash index from key to slot position, written for keys that are addresses or counters:
/// open addressing with linear probing, a multiplicative hash (the keys need mixing, not
/// protection from chosen collisions: they are addresses and counter values the kit makes), and
/// removal by shifting entries back (no tombstones). A bucket is 8 bytes: the hash's top 32 bits
/// (which also give the bucket's home, so growing never reads the slots) and the position plus
/// one; 0 is an empty bucket. At most three quarters of the buckets are used.
struct _SlotIndex {
    /// Up to this many slots, the registry scans them instead of keeping an index.
    static let scanLimit = 8

    // One word: the entry count is the registry's live slot count, and the bucket count, a
    // power of two, gives the shift.
    private(set) var buckets = ContiguousArray<UInt64>()

    private static let hashHalf: UInt64 = 0xFFFF_FFFF_0000_0000

    var isEmpty: Bool { buckets.isEmpty }

    /// The key's hash with its low half cleared (the stored half).
    @inline(__always)
    static func hash(_ raw: UInt64) -> UInt64 {
        (raw &* 0x9E37_79B9_7F4A_7C15) & hashHalf
    }

    /// 64 minus log2 of the bucket count: `hash >> shift` is a home bucket.
    @inline(__always)
    private var shift: UInt64 {
        UInt64(truncatingIfNeeded: 64 &- buckets.count.trailingZeroBitCount)
    }

    @inline(__always)
    private static func home(_ entry: UInt64, shift: UInt64) -> Int {
        Int(truncatingIfNeeded: entry >> shift)
    }

    /// The entries, counted (for consistency checks only: O(buckets)).
    var usedBuckets: Int { buckets.reduce(0) { $0 + ($1 == 0 ? 0 : 1) } }

    /// The bucket and slot position of `raw`, if it is indexed.
    @inline(__always)
    func find(_ raw: UInt64, in slots: ContiguousArray<_Slot>) -> (bucket: Int, position: Int)? {
        let found = probe(raw, in: slots)
        guard let position = found.position else { return nil }
        return (found.bucket, position)
    }

    /// Where `raw` is (bucket and position), or the empty bucket where its search ended.
    @inline(__always)
    func probe(_ raw: UInt64, in slots: ContiguousArray<_Slot>) -> (bucket: Int, position: Int?) {
        let hash = Self.hash(raw)
        let mask = buckets.count &- 1
        var bucket = Self.home(hash, shift: shift)
        while true {
            let entry = buckets[bucket]
            if entry == 0 { return (bucket, nil) }
            if entry & Self.hashHalf == hash {
                let position = Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: entry)) &- 1
                if slots[position].bits & _SlotFlags.keyMask == raw { return (bucket, position) }
            }
            bucket = (bucket &+ 1) & mask
        }
    }

    /// Makes room for one more entry, `count` being the entries indexed now (before `probe`,
    /// whose empty bucket `fill` then uses).
    @inline(__always)
    mutating func reserveOne(count: Int) {
        if (count &+ 1) &* 4 > buckets.count &* 3 { resize(to: buckets.count * 2) }
    }

    mutating func fill(_ bucket: Int, raw: UInt64, position: Int) {
        buckets[bucket] = Self.hash(raw) | UInt64(truncatingIfNeeded: position &+ 1)
    }

    /// Points an entry at a new position (same key).
    mutating func repoint(_ bucket: Int, to position: Int) {
        buckets[bucket] = (buckets[bucket] & Self.hashHalf) | UInt64(truncatingIfNeeded: position &+ 1)
    }

    /// Empties `bucket`, moving later entries of its run back so that every search still finds
    /// them before an empty bucket.
    mutating func remove(at bucket: Int) {
        let mask = buckets.count &- 1
        let shift = self.shift
        var hole = bucket
        var next = (bucket &+ 1) & mask
        while true {
            let entry = buckets[next]
            if entry == 0 { break }
            // `entry` may move into the hole if the hole lies between its home and where it is.
            if (next &- Self.home(entry, shift: shift)) & mask >= (next &- hole) & mask {
                buckets[hole] = entry
                hole = next
            }
            next = (next &+ 1) & mask
        }
        buckets[hole] = 0
    }

    /// The number of buckets (a power of two, or zero without an index).
    var bucketCount: Int { buckets.count }

    /// Points every entry at its slot's position after a compaction: `runs` (in increasing
    /// `start` order, the first at position 0) says how far each run of slots moved down.
    /// Hashes and so buckets stay; one pass over the buckets, in memory order.
    mutating func shiftPositions(_ runs: [(start: Int, shift: Int)]) {
        buckets.withUnsafeMutableBufferPointer { buckets in
            for bucket in buckets.indices where buckets[bucket] != 0 {
                let entry = buckets[bucket]
                let position = Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: entry)) &- 1
                // The last run that starts at or before `position`.
                var low = 0
                var high = runs.count - 1
                while low < high {
                    let middle = (low + high + 1) / 2
                    if runs[middle].start <= position { low = middle } else { high = middle - 1 }
                }
                buckets[bucket] = entry &- UInt64(truncatingIfNeeded: runs[low].shift)
            }
        }
    }

    /// Re-indexes every used slot; no index when they are few enough to scan.
    mutating func rebuild(from slots: ContiguousArray<_Slot>) {
        guard slots.count > Self.scanLimit else {
            self = _SlotIndex()
            return
        }
        var used = 0
        for position in slots.indices where slots[position].bits != 0 { used += 1 }
        var capacity = 16
        while capacity * 3 < (used + 1) * 4 { capacity *= 2 }
        buckets = ContiguousArray(repeating: 0, count: capacity)
        let shift = self.shift
        let mask = capacity - 1
        for position in slots.indices where slots[position].bits != 0 {
            let entry = Self.hash(slots[position].bits & _SlotFlags.keyMask) | UInt64(position + 1)
            var bucket = Self.home(entry, shift: shift)
            while buckets[bucket] != 0 { bucket = (bucket &+ 1) & mask }
            buckets[bucket] = entry
        }
    }

    private mutating func resize(to capacity: Int) {
        let old = buckets
        buckets = ContiguousArray(repeating: 0, count: capacity)
        let shift = self.shift
        let mask = capacity - 1
        for entry in old where entry != 0 {
            var bucket = Self.home(entry, shift: shift)
            while buckets[bucket] != 0 { bucket = (bucket &+ 1) & mask }
            buckets[bucket] = entry
        }
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
            // Edge entries, live or not, are always on both sides (see `_SlotFlags.tracking`).
            for slot in state.observers.slots where slot.bits & _SlotFlags.tracking != 0 {
                guard let tracker = byKey[slot.key] else { continue }
                if !tracker.subscriptions.contains(ObserverID(node)) {
                    problems.append("\(name) lists observer \(slot.key), which does not list it")
                }
            }
            for key in state.subscriptions.keys {
                guard let observable = byKey[key] else { continue }
                guard let position = observable.observers.index[ObserverID(node)] else {
                    problems.append("\(name) lists subscription \(key), which does not list it")
                    continue
                }
                if observable.observers.slots[Int(position)].bits & _SlotFlags.tracking == 0 {
                    problems.append("\(key) lists \(name) as a plain observer, not a tracking one")
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
            var state = node._state._stateWhileLocked
            // The copies are read after unlocking, while the nodes go on changing.
            state.observers.detachExtras()
            state.subscriptions.detachExtras()
            states.append(state)
        }
        whileLocked(states)
        for node in nodes.reversed() { node._state._unlockUnscoped() }
        return states
    }
}

// MARK: - Casting helpers

// Objects in slots always came from conforming types, and no conformance to the kit's protocols
// can be isolated to an actor (`_GraphConformance`), so these casts succeed from every thread.
// They are still conditional: a failed lookup skips the entry instead of trapping.

func _graphObserver(_ object: AnyObject, bits: UInt64) -> (any GraphObserver)? {
    if bits & _SlotFlags.boxed != 0 {
        return unsafeDowncast(object, to: _ValueObserverBox.self).observer
    }
    return object as? any GraphObserver
}

func _graphObservable(_ object: AnyObject) -> (any GraphObservable)? {
    object as? any GraphObservable
}
