/// An array whose observers learn exactly how it changed: each mutation delivers one
/// `ArrayChange`, the new array with an `ArrayChangeset` (indices inserted, deleted, updated,
/// moved), so that a table view or a mirror can apply just that.
///
///     let names = ObservableArray(["Steve", "Tim"])
///     let token = names.observeValues { print($0.changeset) }  // first: inserts [0, 1]
///     names.append("John")   // inserts [2]
///     try names.removeLast() // deletes [2]
///     names[1] = "Mark"      // updates [1]
///
/// A new observer first receives the whole array as inserts into an empty one; then each
/// change, valid against the array it saw last. Delivery order, reentrancy, tokens and
/// termination follow `GraphEventSource`. A mutation made from inside an observer is applied at
/// once and delivered after the current event, never interleaved with it.
///
/// Thread safety: `Sendable`; every member is safe from any thread. Each mutation and its event
/// are atomic with respect to other mutations.
///
/// Cost: an event's array shares this array's storage, so while an event is held (queued for an
/// observer on another actor or queue, or kept by an observer), the next mutation copies the
/// array first, O(n). Fill an array from another actor in bulk (`append(contentsOf:)`,
/// `batch(_:isolation:)`) rather than one element at a time.
public final class ObservableArray<Element: Sendable>: ReadOnlyObservableArray<Element>,
    @unchecked Sendable
{
    /// An observable array holding `elements`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ elements: [Element] = []) {
        super.init(elements: elements)
    }

    /// The element at `index`, or `nil` when out of range. Setting replaces it (`updates
    /// [index]`); setting `nil` or an index out of range is a documented no-op. Use
    /// `set(_:at:)` to be told about a bad index.
    ///
    /// Thread safety: safe from any thread. A setter cannot learn its caller's actor: made on the
    /// main actor (recognized by the main queue), it calls that actor's observers before it
    /// returns; made on another actor, that actor's observers get the change on its next turn
    /// (write `set(_:at:)` there).
    /// Callbacks: observers' handlers, for a set.
    /// - Complexity: O(1) to get; O(1) plus the delivery to set.
    @inlinable
    public override subscript(index: Int) -> Element? {
        get { element(at: index) }
        set {
            guard let newValue else { return }
            try? set(newValue, at: index)
        }
    }

    /// Appends `element`: `inserts [count]`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Returns: `false` (and changes nothing) if the array has terminated.
    /// - Complexity: amortized O(1) plus the delivery to n observers, O(n).
    @inlinable @discardableResult
    public func append(_ element: Element, isolation: isolated (any Actor)? = #isolation) -> Bool {
        _mutateCurrent(isolation: isolation) { change, _ in
            change.array.append(element)
            change.changeset = ArrayChangeset(_storage: .inserts([change.array.count - 1]))
            return (true, ())
        } != nil
    }

    /// Appends `elements`: `inserts [count..<count + elements.count]` (nothing when empty).
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers, once.
    /// - Returns: `false` (and changes nothing) if the array has terminated.
    /// - Complexity: O(k) plus the delivery, k = elements.count.
    @inlinable @discardableResult
    public func append(
        contentsOf elements: some Sequence<Element>, isolation: isolated (any Actor)? = #isolation
    ) -> Bool {
        let added = Array(elements)
        return _mutateCurrent(isolation: isolation) { change, _ in
            guard !added.isEmpty else { return (false, ()) }
            let start = change.array.count
            change.array.append(contentsOf: added)
            change.changeset = ArrayChangeset(_storage: .inserts(Array(start..<change.array.count)))
            return (true, ())
        } != nil
    }

    /// Inserts `element` at `index` (0...count): `inserts [index]`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(count) plus the delivery.
    @inlinable
    public func insert(_ element: Element, at index: Int, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _mutateAlways(isolation) { change throws(ObservableArrayError) in
            guard index >= 0 && index <= change.array.count else {
                throw .indexOutOfRange(index: index, count: change.array.count)
            }
            change.array.insert(element, at: index)
            change.changeset = ArrayChangeset(_storage: .inserts([index]))
            return ()
        }
    }

    /// Replaces the element at `index`: `updates [index]`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(1) plus the delivery.
    @inlinable
    public func set(_ element: Element, at index: Int, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        let replaced = try _mutateAlways(isolation) { change throws(ObservableArrayError) in
            guard change.array.indices.contains(index) else {
                throw .indexOutOfRange(index: index, count: change.array.count)
            }
            let replaced = change.array[index]
            change.array[index] = element
            change.changeset = ArrayChangeset(_storage: .updates([index]))
            return replaced
        }
        withExtendedLifetime(replaced) {}
    }

    /// Removes and returns the element at `index`: `deletes [index]`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(count) plus the delivery.
    @inlinable @discardableResult
    public func remove(at index: Int, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError) -> Element
    {
        try _mutateAlways(isolation) { change throws(ObservableArrayError) in
            guard change.array.indices.contains(index) else {
                throw .indexOutOfRange(index: index, count: change.array.count)
            }
            change.changeset = ArrayChangeset(_storage: .deletes([index]))
            return change.array.remove(at: index)
        }
    }

    /// Removes and returns the last element: `deletes [count - 1]`.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.empty` or `.terminated`; nothing changes.
    /// - Complexity: O(1) plus the delivery.
    @inlinable @discardableResult
    public func removeLast(isolation: isolated (any Actor)? = #isolation) throws(ObservableArrayError)
        -> Element
    {
        try _mutateAlways(isolation) { change throws(ObservableArrayError) in
            guard !change.array.isEmpty else { throw .empty }
            change.changeset = ArrayChangeset(_storage: .deletes([change.array.count - 1]))
            return change.array.removeLast()
        }
    }

    /// Removes every element: `deletes [0..<count]` (nothing when already empty).
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Returns: `false` (and changes nothing) if the array has terminated.
    /// - Complexity: O(count) plus the delivery.
    @inlinable @discardableResult
    public func removeAll(isolation: isolated (any Actor)? = #isolation) -> Bool {
        let removed = _mutateCurrent(isolation: isolation) {
            change, _ -> (changed: Bool, result: [Element]) in
            guard !change.array.isEmpty else { return (false, []) }
            let removed = change.array
            change.changeset = ArrayChangeset(_storage: .deletes(Array(removed.indices)))
            change.array = []
            return (true, removed)
        }
        return removed != nil
    }

    /// Moves the element at `source` so that it ends up at `destination` (both in 0..<count):
    /// `moves [source→destination]`. Moving an element onto itself changes nothing.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(count) plus the delivery.
    @inlinable
    public func move(from source: Int, to destination: Int, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _mutateChecked(isolation) { change throws(ObservableArrayError) in
            guard change.array.indices.contains(source) else {
                throw .indexOutOfRange(index: source, count: change.array.count)
            }
            guard change.array.indices.contains(destination) else {
                throw .indexOutOfRange(index: destination, count: change.array.count)
            }
            guard source != destination else { return (false, ()) }
            let element = change.array.remove(at: source)
            change.array.insert(element, at: destination)
            change.changeset = ArrayChangeset(_storage: .moves([.init(from: source, to: destination)]))
            return (true, ())
        }
    }

    /// Replaces the whole content with a reload: every old index deleted, every new one
    /// inserted, whatever the elements. Never diffs; use `replace(with:)` for a diff. An empty
    /// array reloaded with no elements delivers nothing (nothing changed).
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: observers' handlers (none when nothing changed).
    /// - Returns: `false` if the array has terminated.
    /// - Complexity: O(old + new) plus the delivery.
    @discardableResult
    public func reload(with elements: [Element], isolation: isolated (any Actor)? = #isolation) -> Bool {
        _reload(with: elements, isolation: isolation)
    }

    /// Unavailable: elements that are not `Equatable` cannot be diffed. Say what you mean:
    /// `reload(with:)` replaces everything (what this did before), or make the elements
    /// `Equatable` (or use `replace(with:identifiedBy:)`) to diff.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(old + new).
    @available(
        *, unavailable, renamed: "reload(with:)",
        message: "elements that are not Equatable cannot be diffed: use reload(with:) to replace everything"
    )
    @discardableResult
    public func replace(with elements: [Element]) -> Bool {
        _reload(with: elements)
    }

    /// In-place mutation that may refuse with an error (and change nothing). The error is part
    /// of the recorded result, so that a nested call replayed by an outer read-modify-write
    /// rethrows the same error.
    @inlinable
    final func _mutateChecked<Result>(
        _ isolation: (any Actor)?,
        _ body: (inout ArrayChange<Element>) throws(ObservableArrayError) -> (Bool, Result)
    ) throws(ObservableArrayError) -> Result {
        let outcome = _mutateCurrent(isolation: isolation) {
            change, _ -> (changed: Bool, result: Swift.Result<Result, ObservableArrayError>) in
            do throws(ObservableArrayError) {
                let (changed, result) = try body(&change)
                return (changed, .success(result))
            } catch {
                return (false, .failure(error))
            }
        }
        guard let outcome else { throw .terminated }
        return try outcome.get()
    }

    /// A checked mutation that always changes the array when it does not throw.
    @inlinable
    final func _mutateAlways<Result>(
        _ isolation: (any Actor)?, _ body: (inout ArrayChange<Element>) throws(ObservableArrayError) -> Result
    ) throws(ObservableArrayError) -> Result {
        try _mutateChecked(isolation) { change throws(ObservableArrayError) in (true, try body(&change)) }
    }
}

extension ObservableArray where Element: Equatable {
    /// Replaces the whole content with `elements`, always diffing: the smallest changeset, for
    /// example `[1, 2, 3]` → `[0, 1, 3, 4]` delivers `deletes [1], inserts [0, 3]`. Delivers
    /// nothing when the content is equal. (`reload(with:)` replaces without diffing.)
    ///
    /// Thread safety: safe from any thread. The diff runs with no lock held; if another
    /// mutation lands meanwhile, it is computed again.
    /// Callbacks: `==` of `Element`, then observers' handlers.
    /// - Returns: `false` if the array has terminated.
    /// - Complexity: see `ArrayChangeset.diff(from:to:)`.
    @discardableResult
    public func replace(with elements: [Element], isolation: isolated (any Actor)? = #isolation) -> Bool {
        _replace(with: elements, isolation: isolation) { ArrayChangeset.diff(from: $0, to: $1) }
    }

    /// Replaces the content, matching elements by identity: a matched element with a new value
    /// is an update. See `ArrayChangeset.diff(from:to:identifiedBy:)`.
    ///
    /// Thread safety: as `replace(with:)`. Callbacks: `id`, `==`, then observers' handlers.
    /// - Returns: `false` if the array has terminated.
    /// - Complexity: see `ArrayChangeset.diff(from:to:identifiedBy:)`.
    @discardableResult
    public func replace<ID: Hashable>(
        with elements: [Element], identifiedBy id: (Element) -> ID,
        isolation: isolated (any Actor)? = #isolation
    ) -> Bool {
        _replace(with: elements, isolation: isolation) {
            ArrayChangeset.diff(from: $0, to: $1, identifiedBy: id)
        }
    }
}

extension ObservableArray where Element: Hashable {
    /// Replaces the whole content with `elements`, always diffing (in linear time when many
    /// elements changed). See `ArrayChangeset.diff(from:to:)`.
    ///
    /// Thread safety: as the `Equatable` overload. Callbacks: `==`, `hash(into:)`, handlers.
    /// - Returns: `false` if the array has terminated.
    /// - Complexity: see `ArrayChangeset.diff(from:to:)`.
    @discardableResult
    public func replace(with elements: [Element], isolation: isolated (any Actor)? = #isolation) -> Bool {
        _replace(with: elements, isolation: isolation) { ArrayChangeset.diff(from: $0, to: $1) }
    }
}

/// Why an observable array refused a mutation. Nothing changed.
///
/// Thread safety: a value; `Sendable`.
public enum ObservableArrayError: Error, Equatable, Sendable {
    /// The index is outside the array (or outside 0...count for an insertion).
    case indexOutOfRange(index: Int, count: Int)
    /// The array is empty.
    case empty
    /// The array has terminated (`finish()` or `fail(_:)`): it no longer changes.
    case terminated
}
