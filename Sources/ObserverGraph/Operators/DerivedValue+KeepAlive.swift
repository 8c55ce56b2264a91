// What keeps a derived value (and its chain) alive while one of its observations lasts.

/// What a derived value's token cancels: the observation, while keeping the value alive.
/// Thread safety: its stored properties are `Sendable` constants (the conformance is
/// `_SubscriptionTarget`'s, unchecked).
final class _KeepAliveTarget: _SubscriptionTarget, @unchecked Sendable {
    let token: SubscriptionToken
    /// The derived value, released when the observation is cancelled.
    let owner: GraphLock<(any Sendable & AnyObject)?>

    init(token: SubscriptionToken, owner: any Sendable & AnyObject) {
        self.token = token
        self.owner = GraphLock(owner)
        super.init()
    }

    @usableFromInline
    override func _cancel() {
        token.cancel()
        let released = owner.withLock { owner in
            defer { owner = nil }
            return owner
        }
        withExtendedLifetime(released) {}
    }

    @usableFromInline
    override var _isClosed: Bool {
        token.isCancelled
    }
}
