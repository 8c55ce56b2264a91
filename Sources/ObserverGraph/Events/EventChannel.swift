/// A stream of events with no memory: observers receive only what is sent after they joined (the
/// role of RxSwift's `PublishSubject` and Combine's `PassthroughSubject`).
///
///     let taps = EventChannel<Int>()
///     let token = taps.observeValues { print("tap", $0) }
///     taps.send(1)    // prints "tap 1"
///     taps.finish()   // observers receive .finished and are removed
///
/// Delivery order, reentrancy and termination follow `GraphEventSource`.
///
/// Thread safety: `Sendable`; every member is safe from any thread.
public final class EventChannel<Value: Sendable>: GraphEventSource<Value>, @unchecked Sendable {
    /// A channel with no observers.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init() {
        super.init(current: nil)
    }

    /// Sends `value` to every current observer.
    ///
    /// Thread safety: safe from any thread or actor. If another delivery is running (on this
    /// thread or another), the value is queued and delivered after it, in order. `isolation` is
    /// the caller's actor (`#isolation`): observers living on it are called before `send`
    /// returns; observers on other actors receive it on theirs.
    /// Callbacks: observers' handlers.
    /// - Returns: `false` (and delivers nothing) if the channel has terminated.
    /// - Complexity: O(n) for the delivery to n observers.
    @inlinable @discardableResult
    public func send(_ value: Value, isolation: isolated (any Actor)? = #isolation) -> Bool {
        _send(value, isolation: isolation)
    }
}

extension EventChannel where Value == Void {
    /// Sends an event that carries no value.
    ///
    /// Thread safety: as `send(_:)`. Callbacks: observers' handlers.
    /// - Returns: `false` if the channel has terminated.
    /// - Complexity: O(n) for the delivery to n observers.
    @discardableResult
    public func send(isolation: isolated (any Actor)? = #isolation) -> Bool {
        _send((), isolation: isolation)
    }
}
