/// An observable array that you can observe and read but not change: what `map`, `filter` and
/// `ReadOnlyObservableArray(diffing:)` return. Each change delivers one `ArrayChange`, the new
/// array with its `ArrayChangeset`, exactly as for `ObservableArray` (its writable subclass).
///
///     let lengths = names.map { $0.count }   // a ReadOnlyObservableArray<Int>
///     lengths.array                          // read it, observe it, map or filter it again
///     // lengths.append(3)                   // does not compile: it follows `names`
///
/// A derived array follows its source until the source terminates: when the source finishes or
/// fails, so does the derived array (its `terminalEvent` is set, its observers are told, and a
/// `for try await` loop over its `values()` ends).
///
/// Thread safety: `Sendable`; every member is safe from any thread.
public class ReadOnlyObservableArray<Element: Sendable>: GraphEventSource<ArrayChange<Element>>,
    @unchecked Sendable
{
    /// What a derived array follows (tokens and the upstream sources); released with it.
    @usableFromInline let upstreams = GraphLock<[AnyObject]>([])

    /// `derived`: an array made by `map`, `filter` or `init(diffing:)`, which nothing else keeps
    /// alive: each of its observations does (see `GraphEventSource._tokensKeepSourceAlive`).
    @usableFromInline init(elements: [Element], derived: Bool = false) {
        super.init(
            current: ArrayChange(array: elements, changeset: ArrayChangeset()),
            tokensKeepSourceAlive: derived)
    }

    @usableFromInline
    override func _replayValue(_ current: ArrayChange<Element>) -> ArrayChange<Element> {
        ArrayChange(array: current.array, changeset: .reload(oldCount: 0, newCount: current.array.count))
    }

    /// The elements now.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) (copy-on-write).
    public final var array: [Element] {
        _snapshot().value.array
    }

    /// The number of elements now.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public final var count: Int {
        pipeline.withLock { $0.current!.array.count }
    }

    /// The element at `index`, or `nil` when out of range.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public final func element(at index: Int) -> Element? {
        pipeline.withLock { state in
            let array = state.current!.array
            return array.indices.contains(index) ? array[index] : nil
        }
    }

    /// The element at `index`, or `nil` when out of range.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public subscript(index: Int) -> Element? {
        element(at: index)
    }

    /// Replaces the whole content, delivering a reload (every old index deleted, every new one
    /// inserted). Internal: how a derived array catches up when it is out of step.
    @discardableResult
    @usableFromInline
    final func _reload(with elements: [Element], isolation: (any Actor)? = nil) -> Bool {
        _reloadVersion(with: elements, isolation: isolation) != nil
    }

    /// `_reload(with:)`, returning the version the reload left this array at (`nil` if it has
    /// terminated): what a `bind(to:)` target compares with its version at its next change.
    /// Not inlinable: the rare path of `_apply`, kept out of the inlined one.
    @usableFromInline
    final func _reloadVersion(with elements: [Element], isolation: (any Actor)? = nil) -> UInt64? {
        let outcome = _mutateCurrent(isolation: isolation) {
            change, version -> (changed: Bool, result: ([Element], UInt64)) in
            let removed = change.array
            // Empty to empty: nothing changed, nothing to deliver (as for a `replace`).
            if removed.isEmpty && elements.isEmpty { return (false, ([], version)) }
            change.changeset = .reload(oldCount: removed.count, newCount: elements.count)
            change.array = elements
            return (true, (removed, version &+ 1))
        }
        return outcome?.1  // the old elements are released here, after unlocking
    }

    /// Replaces the whole content with `elements`, delivering the changeset `diff` computes
    /// from the old content to the new (outside the lock, retried if another mutation landed
    /// meanwhile). Delivers nothing when nothing changed.
    final func _replace(
        with elements: [Element], isolation: (any Actor)? = nil,
        diff: ([Element], [Element]) -> ArrayChangeset
    ) -> Bool {
        _readModifyWrite(isolation: isolation) { current in
            let changeset = diff(current.array, elements)
            let unchanged = changeset.isEmpty && current.array.count == elements.count
            return (unchanged ? nil : ArrayChange(array: elements, changeset: changeset), ())
        }.accepted
    }
}
