// Arrays derived from other arrays: `map`, `filter`, `bind(to:)`, and diffing a stream of arrays.
// A derived array is an ordinary `ObservableArray` that follows its upstream with fine-grained
// changes; it keeps its upstream subscription alive, and the upstream does not keep it alive.

extension ObservableArray {
    /// An array of `transform(element)` for each element, kept in step with fine-grained
    /// changes: the same changeset as upstream, e.g. appending "Tony" to names delivers
    /// `inserts [2]` to the mapped lengths too.
    ///
    /// `transform` runs only for inserted and updated elements, with no lock held.
    ///
    /// Thread safety: safe from any thread; the derived array is updated on the thread that
    /// delivers the upstream change.
    /// Callbacks: `transform`; the derived array's observers' handlers.
    /// - Returns: a new array that follows this one for as long as it is alive.
    /// - Complexity: per upstream change, O(k) for appends at the end, else O(n), plus k
    ///   calls of `transform`.
    public func map<Mapped: Sendable>(_ transform: @escaping @Sendable (Element) -> Mapped)
        -> ObservableArray<Mapped>
    {
        let derived = ObservableArray<Mapped>()
        derived.follow(self) { [weak derived] change in derived?.apply(change, transform: transform) }
        return derived
    }

    /// The elements for which `isIncluded` is true, kept in step with fine-grained changes:
    /// upstream changes are translated to the filtered indices (an update that makes an element
    /// leave or enter becomes a delete or an insert).
    ///
    /// `isIncluded` runs only for inserted and updated elements, with no lock held.
    ///
    /// Thread safety: safe from any thread; updated on the thread delivering upstream changes.
    /// Callbacks: `isIncluded`; the derived array's observers' handlers.
    /// - Returns: a new array that follows this one for as long as it is alive.
    /// - Complexity: O(n log n) per upstream change, plus k calls of `isIncluded`.
    public func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> ObservableArray<Element> {
        let derived = ObservableArray<Element>()
        let filter = _FilterState(isIncluded)
        derived.follow(self) { [weak derived] change in
            guard let derived else { return }
            let filtered = filter.translate(change)
            derived.apply(filtered, transform: { $0 })
        }
        return derived
    }

    /// Makes `target` follow this array: it first takes this array's content (one reload),
    /// then receives each change with its changeset. Cancel the token to stop.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: `target`'s observers' handlers.
    /// - Returns: the token that keeps the binding alive.
    /// - Complexity: per change, as `map`.
    public func bind(to target: ObservableArray<Element>) -> SubscriptionToken {
        observeValuesNonisolated { [weak target] change in target?.apply(change, transform: { $0 }) }
    }

    /// Applies an upstream change whose indices refer to this array's content. If this array is
    /// out of step (changed by someone else), it reloads from the upstream array instead.
    func apply<Source>(_ change: ArrayChange<Source>, transform: (Source) -> Element) {
        let changeset = change.changeset
        let newCount = change.array.count
        let oldCount = newCount - changeset.inserts.count + changeset.deletes.count
        let (origins, updated) = changeset.origins(oldCount: oldCount, newCount: newCount)
        // Transform only what is new, before taking the lock.
        var fresh: [Element?] = Array(repeating: nil, count: newCount)
        for (position, origin) in origins.enumerated() where origin == nil || updated[origin!] {
            fresh[position] = transform(change.array[position])
        }
        let appendsOnly =
            changeset.deletes.isEmpty && changeset.updates.isEmpty && changeset.moves.isEmpty
            && changeset.inserts.first.map { $0 == oldCount } ?? true
        let inStep = _mutateCurrent { current -> (changed: Bool, result: (Bool, [Element])) in
            guard current.array.count == oldCount else { return (false, (false, [])) }
            let previous = current.array
            if appendsOnly {
                for position in oldCount..<newCount { current.array.append(fresh[position]!) }
                current.changeset = changeset
                return (!changeset.isEmpty, (true, []))
            }
            current.array = origins.enumerated().map { position, origin in
                if let origin, !updated[origin] { return previous[origin] }
                return fresh[position]!
            }
            current.changeset = changeset
            return (!changeset.isEmpty, (true, previous))
        }
        guard let inStep, !inStep.0 else { return }
        // Out of step: reload everything from upstream.
        replace(with: change.array.map(transform))
    }

    /// Keeps `handler` subscribed to `upstream`, and `upstream` itself alive, for as long as
    /// this array is alive: a chain `a.map(f).filter(g)` keeps its middle link. (The upstream
    /// holds this array only weakly, so there is no cycle.)
    func follow<Source: Sendable>(
        _ upstream: GraphEventSource<Source>, _ handler: @escaping @Sendable (Source) -> Void
    ) {
        let token = upstream.observeValuesNonisolated(handler)
        upstreams.withLock { $0 += [token, upstream] }
    }
}

extension ObservableArray where Element: Equatable {
    /// An array that follows a stream of whole arrays, delivering the diff between consecutive
    /// ones: the diff operator. For example, follow an `ObservableValue<[Item]>` that a store
    /// reloads, and observers still get fine-grained changes.
    ///
    /// Thread safety: safe from any thread; updated on the thread delivering upstream values.
    /// Callbacks: `==` of `Element`; this array's observers' handlers.
    /// - Complexity: per upstream value, see `ArrayChangeset.diff(from:to:)`.
    public convenience init(diffing upstream: GraphEventSource<[Element]>) {
        self.init()
        follow(upstream) { [weak self] array in self?.replace(with: array) }
    }

    /// The same, matching elements by identity (a matched element with a new value is an update).
    ///
    /// Thread safety: as `init(diffing:)`. Callbacks: `id`, `==`; this array's handlers.
    /// - Complexity: see `ArrayChangeset.diff(from:to:identifiedBy:)`.
    public convenience init<ID: Hashable & Sendable>(
        diffing upstream: GraphEventSource<[Element]>, identifiedBy id: @escaping @Sendable (Element) -> ID
    ) {
        self.init()
        follow(upstream) { [weak self] array in self?.replace(with: array, identifiedBy: id) }
    }
}

/// What `filter` remembers between upstream changes: which upstream elements are included.
final class _FilterState<Element: Sendable>: Sendable {
    private let isIncluded: @Sendable (Element) -> Bool
    private let included = GraphLock<[Bool]>([])

    init(_ isIncluded: @escaping @Sendable (Element) -> Bool) {
        self.isIncluded = isIncluded
    }

    /// Turns an upstream change into the change of the filtered array. Upstream changes arrive
    /// one at a time (a source delivers serially), so the flags are read and written in order.
    func translate(_ change: ArrayChange<Element>) -> ArrayChange<Element> {
        let changeset = change.changeset
        let newCount = change.array.count
        let oldCount = newCount - changeset.inserts.count + changeset.deletes.count
        var oldIncluded = included.withLock { $0 }
        if oldIncluded.count != oldCount {
            oldIncluded = []  // first change (a reload from empty) or out of step
        }
        let (origins, updated) =
            oldIncluded.count == oldCount
            ? changeset.origins(oldCount: oldCount, newCount: newCount)
            : (Array(repeating: nil, count: newCount), [])
        var rank = [Int](repeating: 0, count: oldIncluded.count)
        var filteredOldCount = 0
        for (index, flag) in oldIncluded.enumerated() {
            rank[index] = filteredOldCount
            if flag { filteredOldCount += 1 }
        }
        var newIncluded = [Bool](repeating: false, count: newCount)
        var filteredOrigins: [Int?] = []
        var filteredUpdated = Set<Int>()
        var filteredArray: [Element] = []
        for position in 0..<newCount {
            let origin = origins[position]
            let reused = origin.map { !updated[$0] } ?? false
            let keep = reused ? oldIncluded[origin!] : isIncluded(change.array[position])
            newIncluded[position] = keep
            guard keep else { continue }
            filteredArray.append(change.array[position])
            if let origin, oldIncluded[origin] {
                filteredOrigins.append(rank[origin])
                if updated[origin] { filteredUpdated.insert(rank[origin]) }
            } else {
                filteredOrigins.append(nil)
            }
        }
        included.withLock { $0 = newIncluded }
        let filteredChangeset = ArrayChangeset.fromOrigins(
            filteredOrigins, oldCount: filteredOldCount, updated: filteredUpdated)
        return ArrayChange(array: filteredArray, changeset: filteredChangeset)
    }
}
