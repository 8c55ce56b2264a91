// Arrays derived from other arrays: `map`, `filter` and `bind(to:)` (diffing a stream of whole
// arrays is in ReadOnlyObservableArray+Diffing.swift).
// A derived array is a `ReadOnlyObservableArray` that follows its upstream with fine-grained
// changes until the upstream terminates; it keeps its upstream subscription alive, and the
// upstream does not keep it alive; its observations' tokens do.
//
// The path of a change (`map`, `filter`, `follow`, `_apply`) is inlinable, so that a derived
// array is specialized for its element types where it is made: unspecialized, each upstream
// change looked up some 20,000 instructions' worth of generic metadata.

extension ReadOnlyObservableArray {
    /// An array of `transform(element)` for each element, kept in step with fine-grained
    /// changes: the same changeset as upstream, e.g. appending "Tony" to names delivers
    /// `inserts [2]` to the mapped lengths too. It finishes or fails when this array does.
    ///
    /// `transform` runs only for inserted and updated elements, with no lock held.
    ///
    /// Thread safety: safe from any thread; the derived array is updated on the thread that
    /// delivers the upstream change.
    /// Callbacks: `transform`; the derived array's observers' handlers.
    /// - Returns: a read-only array that follows this one for as long as it is alive; each of
    ///   its observations keeps it alive until the token is cancelled.
    /// - Complexity: per upstream change of k entries, O(k log k) plus k calls of `transform`;
    ///   the derived array shifts its elements after a middle insert or delete (one memmove),
    ///   and never makes a pass over the whole array for appends, updates or removals at the end.
    @inlinable
    public final func map<Mapped: Sendable>(_ transform: @escaping @Sendable (Element) -> Mapped)
        -> ReadOnlyObservableArray<Mapped>
    {
        let derived = ReadOnlyObservableArray<Mapped>(elements: [], derived: true)
        derived.follow(self) { derived, change in
            let changeset = change.changeset
            let (inserted, updated) = changeset._newValues(in: change.array, transform)
            derived._apply(changeset, newCount: change.array.count, inserted: inserted, updated: updated) {
                change.array.map(transform)
            }
        }
        return derived
    }

    /// The elements for which `isIncluded` is true, kept in step with fine-grained changes:
    /// upstream changes are translated to the filtered indices (an update that makes an element
    /// leave or enter becomes a delete or an insert). It finishes or fails when this array does.
    ///
    /// `isIncluded` runs only for inserted and updated elements, with no lock held.
    ///
    /// Thread safety: safe from any thread; updated on the thread delivering upstream changes.
    /// Callbacks: `isIncluded`; the derived array's observers' handlers.
    /// - Returns: a read-only array that follows this one for as long as it is alive; each of
    ///   its observations keeps it alive until the token is cancelled.
    /// - Complexity: per upstream change of k entries, O(k log n) for appends, updates and
    ///   removals at the end (a Fenwick tree of included positions); O(n) for other positional
    ///   changes; plus k calls of `isIncluded`.
    @inlinable
    public final func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool)
        -> ReadOnlyObservableArray<Element>
    {
        let derived = ReadOnlyObservableArray<Element>(elements: [], derived: true)
        let filter = _FilterState(isIncluded)
        derived.follow(self) { derived, change in
            let translated = filter.translate(change)
            derived._apply(
                translated.changeset, newCount: translated.newCount, inserted: translated.inserted,
                updated: translated.updated
            ) { change.array.filter(isIncluded) }
        }
        return derived
    }

    /// Makes `target` follow this array: it first takes this array's content (one reload),
    /// then receives each change with its changeset, and finishes or fails when this array
    /// does. Cancel the token to stop. When something else changes `target` meanwhile, the
    /// next change of this array reloads it with this array's content instead (a changeset
    /// for the old content could not be applied to the new).
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: `target`'s observers' handlers.
    /// - Returns: the token that keeps the binding alive. It keeps this array alive only when
    ///   this array is derived (`map`, `filter`, diffing), as the tokens of its observations
    ///   do; an `ObservableArray` released by everyone else finishes, and so does `target`.
    /// - Complexity: per change, as `map`.
    @inlinable
    public final func bind(to target: ObservableArray<Element>) -> SubscriptionToken {
        let link = _FollowLink(target, self)
        return observeNonisolated { event in
            switch event {
            case .value(let change):
                if !link.started { link.started = true }
                guard let target = link.follower else { return }
                target._take(change, version: &link.followerVersion)
            case .finished, .failed:
                // A source that had terminated before we came replays only its end: catch up.
                let target = link.follower
                if !link.started, let target, let source = link.upstream,
                    let last = source.pipeline.withLock({ $0.current })
                {
                    target._take(source._replayValue(last), version: &link.followerVersion)
                }
                if case .failed(let error) = event { target?.fail(error) } else { target?.finish() }
            }
        }
    }

    /// Applies `change`, a change of the array this one is bound to (`bind(to:)`), with the same
    /// indices; reloads from it when this array is out of step: changed by someone else since
    /// the binding's last change of it, which left it at `version` (`UInt64.max` before the
    /// first). `version` becomes the version this change leaves.
    @inlinable
    final func _take(_ change: ArrayChange<Element>, version: inout UInt64) {
        let changeset = change.changeset
        let (inserted, updated) = changeset._newValues(in: change.array) { $0 }
        version =
            _apply(
                changeset, newCount: change.array.count, inserted: inserted, updated: updated,
                ifVersion: version
            ) { change.array } ?? .max
    }

    /// Applies an upstream change (already translated to this array's indices): `inserted` are
    /// the values of the inserts, `updated` those of the updates. If this array is out of step
    /// (a `bind(to:)` target changed by someone else: its count is not the one the change
    /// starts from, or, unless `expected` is `UInt64.max`, its version is not), it reloads
    /// `everything()` instead. (`UInt64.max`, which a version never reaches, stands for "none"
    /// in the version parameter and result: plain integers are cheaper to carry in and out of
    /// the critical section than optional ones, on the path of every derived change.)
    /// - Returns: the version this array is at after the change (`nil` if it has terminated).
    @inlinable @discardableResult
    final func _apply(
        _ changeset: consuming ArrayChangeset, newCount: Int, inserted: consuming [Element],
        updated: consuming [Element], ifVersion expected: UInt64 = .max, everything: () -> [Element]
    ) -> UInt64? {
        let oldCount = newCount - changeset._growth
        // The version after the change, or `UInt64.max` when out of step.
        let outcome = _mutateCurrent { current, version -> (changed: Bool, result: UInt64) in
            guard current.array.count == oldCount, expected == .max || expected == version else {
                return (false, .max)
            }
            guard !changeset.isEmpty else { return (false, version) }
            changeset.applyInPlace(to: &current.array, inserted: inserted, updated: updated)
            current.changeset = changeset
            return (true, version &+ 1)
        }
        guard outcome == .max else { return outcome }  // in step, or `nil`: terminated
        return _reloadVersion(with: everything())
    }

    /// Keeps `handler` subscribed to `upstream`, and `upstream` itself alive, for as long as
    /// this array is alive: a chain `a.map(f).filter(g)` keeps its middle link. (The upstream
    /// holds this array only weakly, so there is no cycle.) `handler` gets this array and each
    /// upstream value, and is not called once this array is gone. When the upstream terminates,
    /// this array terminates the same way, after taking the upstream's last value if it had none.
    @inlinable
    final func follow<Source: Sendable>(
        _ upstream: GraphEventSource<Source>,
        _ handler: @escaping @Sendable (ReadOnlyObservableArray<Element>, Source) -> Void
    ) {
        let link = _FollowLink(self, upstream)
        let token = upstream.observeNonisolated { event in
            switch event {
            case .value(let value):
                if !link.started { link.started = true }
                guard let follower = link.follower else { return }
                handler(follower, value)
            case .finished, .failed:
                // A source that had terminated before we came replays only its end: catch up.
                let follower = link.follower
                if !link.started, let follower, let upstream = link.upstream,
                    let last = upstream.pipeline.withLock({ $0.current })
                {
                    handler(follower, upstream._replayValue(last))
                }
                if case .failed(let error) = event { follower?.fail(error) } else { follower?.finish() }
            }
        }
        upstreams.withLock { $0 += [token, upstream] }
    }
}

/// What the upstream observation of a derived array (or of a `bind(to:)` target) holds: the
/// array that follows and its upstream, both weakly (the upstream must not keep the array
/// alive, nor the observation its own source), in
/// immutable weak references, which a load reads with no exclusivity check (a `[weak x]` capture
/// is a variable: each load of it made a dynamic exclusivity check, as costly as the load).
@usableFromInline
final class _FollowLink<Follower: AnyObject & Sendable, Upstream: AnyObject & Sendable>: Sendable {
    @usableFromInline weak let follower: Follower?
    @usableFromInline weak let upstream: Upstream?
    /// Whether a value came: read and written only by the calls of one observation, which its
    /// source makes one at a time, each ordered after the previous one (see
    /// `GraphEventSource._roster`).
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var started = false
    /// The version a `bind(to:)` target was left at by the binding's last change of it
    /// (`UInt64.max` before the first): a target at another version was changed by someone
    /// else, and reloads. Read and written as `started` is.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var followerVersion = UInt64.max

    @inlinable
    init(_ follower: Follower, _ upstream: Upstream) {
        self.follower = follower
        self.upstream = upstream
    }
}
