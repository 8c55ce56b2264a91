/// A value that many parts of an app watch: holds a current value; a new observer receives it at
/// once, then every change (the role of RxSwift's `BehaviorSubject` and Combine's
/// `CurrentValueSubject`).
///
///     let credits = ObservableValue(0)
///     let token = credits.observeValues { print("credits:", $0) }   // prints "credits: 0"
///     credits.update { $0 += 10 }                                    // prints "credits: 10"
///
/// Every set is delivered, even of an equal value, unless the value was created with
/// `skipsEqualValues: true` (for `Equatable` values). Delivery order, reentrancy and termination
/// follow `GraphEventSource`. After termination the value is frozen: sets are ignored.
///
/// Thread safety: `Sendable`; every member is safe from any thread. `update` never loses a
/// concurrent change.
public final class ObservableValue<Value: Sendable>: GraphEventSource<Value>, @unchecked Sendable {
    @usableFromInline let isEqual: (@Sendable (Value, Value) -> Bool)?

    /// A value that delivers every set, equal or not.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init(_ initialValue: Value) {
        isEqual = nil
        super.init(current: initialValue)
    }

    /// A value that, with `skipsEqualValues`, does not deliver a set that leaves it equal (`==`)
    /// to what it was.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init(_ initialValue: Value, skipsEqualValues: Bool) where Value: Equatable {
        if skipsEqualValues {
            isEqual = { (old: Value, new: Value) -> Bool in old == new }
        } else {
            isEqual = nil
        }
        super.init(current: initialValue)
    }

    /// The current value. Setting it delivers the new value to every observer.
    ///
    /// A property setter cannot learn its caller's actor, so a set counts as made from
    /// nonisolated code, with one exception: on the main actor (recognized by the main queue),
    /// observers that live there are called before the set returns, as `set(_:)` calls them.
    /// Observers on another actor (`observe(isolation:_:)`) receive it on their actor's next turn,
    /// even when you set it on that actor: there, write `set(_:)` (or `update { $0 = newValue }`)
    /// to have them called before it returns.
    ///
    /// A change written through the property (`credits.value += 1`, `names.value.append(x)`)
    /// reads the value, then sets it: each step is atomic, the pair is not, so two threads doing
    /// it at once can lose a change. Write `update { $0 += 1 }`, which is atomic.
    ///
    /// Thread safety: safe from any thread. A set after termination is ignored.
    /// Callbacks: observers' handlers, for a set (nonisolated ones on this thread, and main-actor
    /// ones when this runs on the main actor, unless another thread is delivering).
    /// - Complexity: O(1) to get; a set is O(n) for the delivery to n observers.
    @inlinable
    public var value: Value {
        get { _snapshot().value }
        set { _set(newValue, isolation: nil) }
    }

    /// Changes the value with `body` atomically: concurrent updates are never lost.
    ///
    /// `body` runs with no lock held, on a private copy of the value. If another change landed
    /// in the meantime, `body` runs again on the newer value. So keep `body` free of side effects
    /// other than its result. To decline the change, throw from `body`: nothing is stored or
    /// delivered, and the error is thrown again with its type (a body written
    /// `{ (credits) throws(WalletError) in … }` makes `update` throw `WalletError`; one that does
    /// not throw needs no `try`). A change that leaves the value equal is still
    /// delivered, unless the value skips equal values. After termination, `body` runs once and
    /// its change is dropped.
    ///
    /// Nesting: a change of this same value made from inside `body` on the same thread (an
    /// `update` inside an `update`) is applied at once; this `update` then runs `body` again on
    /// the new value, and the nested change, reached again, is not applied twice (it returns its
    /// first result). Every change is applied exactly once, the inner one first. The nested
    /// changes of a rerun are matched to the first run's by their order and result type, not by
    /// what they do: make the same nested changes, in the same order, on every run (one made
    /// only when `body` reads some value, in the place of another with the same result type, is
    /// taken for it and not applied). This thread calls no observer before the outer `update`
    /// ends; another thread delivering this value's events meanwhile may deliver the nested
    /// change before that.
    ///
    ///     credits.update { $0 += 10 }
    ///     try credits.update { credits in
    ///         guard credits >= price else { throw WalletError.insufficientCredits }
    ///         credits -= price
    ///     }
    ///
    /// Thread safety: safe from any thread or actor. `isolation` is the caller's actor
    /// (`#isolation`): observers living on it are called before `update` returns.
    /// Callbacks: `body` (one or more times), then observers' handlers for the new value.
    /// - Returns: what `body` returned on the run that was committed.
    /// - Complexity: O(1) per attempt plus the delivery to n observers, O(n).
    @inlinable @discardableResult
    public func update<Result, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try _readModifyWrite(isolation: isolation) { seen throws(Failure) in
            var proposed = seen
            let result = try body(&proposed)
            if let isEqual, isEqual(seen, proposed) { return (nil, result) }
            return (proposed, result)
        }.result
    }

    /// Sets the value from the caller's actor: observers living on that actor are called before
    /// this returns (which the `value` setter cannot do). The same as `update { $0 = newValue }`.
    ///
    /// Thread safety: safe from any thread or actor. A set after termination is ignored.
    /// Callbacks: observers' handlers for the new value.
    /// - Complexity: O(1) plus the delivery to n observers, O(n).
    @inlinable
    public func set(_ newValue: Value, isolation: isolated (any Actor)? = #isolation) {
        _set(newValue, isolation: isolation)
    }

    /// A plain set: one critical section when every set is delivered (nothing to compare, so no
    /// read-modify-write); the `update` path when equal values are skipped, because `==` is the
    /// user's code and never runs under the lock.
    @inlinable
    final func _set(_ newValue: Value, isolation: (any Actor)?) {
        if isEqual == nil {
            _store(newValue, isolation: isolation)
        } else {
            _ = _readModifyWrite(isolation: isolation) { seen in
                (isEqual?(seen, newValue) == true ? nil : newValue, ())
            }
        }
    }
}
