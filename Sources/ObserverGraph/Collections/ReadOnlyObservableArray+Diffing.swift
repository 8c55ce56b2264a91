// Diffing arrays: a read-only array that follows a stream (or a derived value) of whole arrays
// and delivers the diff between consecutive ones, so that its observers get fine-grained changes.

extension ReadOnlyObservableArray where Element: Hashable {
    /// A read-only array that follows a stream of whole arrays, delivering the diff between
    /// consecutive ones: the diff operator. For example, follow an `ObservableValue<[Item]>`
    /// that a store reloads, and observers still get fine-grained changes. It finishes or fails
    /// when the stream does.
    ///
    /// Thread safety: safe from any thread; updated on the thread delivering upstream values.
    /// Callbacks: `==` and `hash(into:)` of `Element`; this array's observers' handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    public convenience init(diffing upstream: GraphEventSource<[Element]>) {
        self.init(elements: [], derived: true)
        follow(upstream) { follower, array in
            _ = follower._replace(with: array) { ArrayChangeset.diff(from: $0, to: $1) }
        }
    }
}

extension ReadOnlyObservableArray where Element: Equatable {
    /// A read-only array that follows a stream of whole arrays, diffing consecutive ones with
    /// `==` only (see `ArrayChangeset.diff(from:to:)` for `Equatable` elements).
    ///
    /// Thread safety: as the `Hashable` overload. Callbacks: `==`; this array's handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    @_disfavoredOverload
    public convenience init(diffing upstream: GraphEventSource<[Element]>) {
        self.init(elements: [], derived: true)
        follow(upstream) { follower, array in
            _ = follower._replace(with: array) { ArrayChangeset.diff(from: $0, to: $1) }
        }
    }

    /// The same, matching elements by identity (a matched element with a new value is an update).
    ///
    /// Thread safety: as `init(diffing:)`. Callbacks: `id`, `==`; this array's handlers.
    /// - Complexity: see `ArrayChangeset.diff(from:to:identifiedBy:)`.
    public convenience init<ID: Hashable & Sendable>(
        diffing upstream: GraphEventSource<[Element]>, identifiedBy id: @escaping @Sendable (Element) -> ID
    ) {
        self.init(elements: [], derived: true)
        follow(upstream) { follower, array in
            _ = follower._replace(with: array) { ArrayChangeset.diff(from: $0, to: $1, identifiedBy: id) }
        }
    }
}

extension ReadOnlyObservableArray where Element: Hashable {
    /// A read-only array that follows a derived value of whole arrays, delivering the diff
    /// between consecutive ones: a list filtered by a query that changes, for example
    /// `ReadOnlyObservableArray(diffing: items.combineLatest(query).map { … })`, still gives
    /// its observers fine-grained changes. It keeps `upstream` (and its chain) alive, and
    /// finishes or fails when `upstream` does.
    ///
    /// Thread safety: safe from any thread; updated on the thread propagating upstream changes.
    /// Callbacks: `==` and `hash(into:)` of `Element`; this array's observers' handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    public convenience init(diffing upstream: DerivedValue<[Element]>) {
        self.init(diffing: upstream.publishing())
        upstreams.withLock { $0.append(upstream) }
    }
}

extension ReadOnlyObservableArray where Element: Equatable {
    /// The same, diffing consecutive arrays with `==` only (see `ArrayChangeset.diff(from:to:)`
    /// for `Equatable` elements).
    ///
    /// Thread safety: as the `Hashable` overload. Callbacks: `==`; this array's handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    @_disfavoredOverload
    public convenience init(diffing upstream: DerivedValue<[Element]>) {
        self.init(diffing: upstream.publishing())
        upstreams.withLock { $0.append(upstream) }
    }

    /// The same, matching elements by identity (a matched element with a new value is an update).
    ///
    /// Thread safety: as `init(diffing:)`. Callbacks: `id`, `==`; this array's handlers.
    /// - Complexity: see `ArrayChangeset.diff(from:to:identifiedBy:)`.
    public convenience init<ID: Hashable & Sendable>(
        diffing upstream: DerivedValue<[Element]>, identifiedBy id: @escaping @Sendable (Element) -> ID
    ) {
        self.init(diffing: upstream.publishing(), identifiedBy: id)
        upstreams.withLock { $0.append(upstream) }
    }
}

extension ObservableArray where Element: Equatable {
    /// A writable array that follows a stream of whole arrays by diffing. Deprecated: a
    /// derived array is read-only; use `ReadOnlyObservableArray(diffing:)`.
    ///
    /// Thread safety: as `ReadOnlyObservableArray(diffing:)`. Callbacks: `==`; handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    @available(*, deprecated, message: "a derived array is read-only: use ReadOnlyObservableArray(diffing:)")
    public convenience init(diffing upstream: GraphEventSource<[Element]>) {
        self.init()
        follow(upstream) { follower, array in
            _ = follower._replace(with: array) { ArrayChangeset.diff(from: $0, to: $1) }
        }
    }

    /// The same, matching elements by identity. Deprecated: use
    /// `ReadOnlyObservableArray(diffing:identifiedBy:)`.
    ///
    /// Thread safety: as `init(diffing:)`. Callbacks: `id`, `==`; handlers.
    /// - Complexity: see `ArrayChangeset.diff(from:to:identifiedBy:)`.
    @available(
        *, deprecated,
        message: "a derived array is read-only: use ReadOnlyObservableArray(diffing:identifiedBy:)"
    )
    public convenience init<ID: Hashable & Sendable>(
        diffing upstream: GraphEventSource<[Element]>, identifiedBy id: @escaping @Sendable (Element) -> ID
    ) {
        self.init()
        follow(upstream) { follower, array in
            _ = follower._replace(with: array) { ArrayChangeset.diff(from: $0, to: $1, identifiedBy: id) }
        }
    }
}
