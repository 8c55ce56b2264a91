/// The working copy a batch edits: the array API, recording where each element came from, so
/// that the whole batch becomes one valid changeset.
///
/// Thread safety: a value, used inside `ObservableArray.batch(_:)` only.
public struct ArrayBatch<Element> {
    /// The elements as the batch has left them so far.
    public private(set) var elements: [Element]
    /// For each current position, the index the element had before the batch (`nil`: new).
    private var origins: [Int?]
    private var updated = Set<Int>()
    private let oldCount: Int

    init(_ elements: [Element]) {
        self.elements = elements
        self.origins = elements.indices.map { Optional($0) }
        self.oldCount = elements.count
    }

    /// The number of elements now.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var count: Int { elements.count }

    /// Appends `element`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: amortized O(1).
    public mutating func append(_ element: Element) {
        elements.append(element)
        origins.append(nil)
    }

    /// Appends `newElements`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k).
    public mutating func append(contentsOf newElements: some Sequence<Element>) {
        for element in newElements { append(element) }
    }

    /// Inserts `element` at `index` (0...count).
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(count).
    public mutating func insert(_ element: Element, at index: Int) throws(ObservableArrayError) {
        guard index >= 0 && index <= elements.count else {
            throw .indexOutOfRange(index: index, count: elements.count)
        }
        elements.insert(element, at: index)
        origins.insert(nil, at: index)
    }

    /// Replaces the element at `index`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(1).
    public mutating func set(_ element: Element, at index: Int) throws(ObservableArrayError) {
        try check(index)
        elements[index] = element
        if let origin = origins[index] { updated.insert(origin) }
    }

    /// Removes and returns the element at `index`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(count).
    @discardableResult
    public mutating func remove(at index: Int) throws(ObservableArrayError) -> Element {
        try check(index)
        origins.remove(at: index)
        return elements.remove(at: index)
    }

    /// Removes and returns the last element.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.empty`; nothing changes.
    /// - Complexity: O(1).
    @discardableResult
    public mutating func removeLast() throws(ObservableArrayError) -> Element {
        guard !elements.isEmpty else { throw .empty }
        origins.removeLast()
        return elements.removeLast()
    }

    /// Removes every element.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(count).
    public mutating func removeAll() {
        elements.removeAll()
        origins.removeAll()
    }

    /// Moves the element at `source` so that it ends up at `destination`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(count).
    public mutating func move(from source: Int, to destination: Int) throws(ObservableArrayError) {
        try check(source)
        try check(destination)
        elements.insert(elements.remove(at: source), at: destination)
        origins.insert(origins.remove(at: source), at: destination)
    }

    /// The one changeset of the whole batch.
    var changeset: ArrayChangeset {
        ArrayChangeset.fromOrigins(origins, oldCount: oldCount, updated: updated)
    }

    private func check(_ index: Int) throws(ObservableArrayError) {
        guard elements.indices.contains(index) else {
            throw .indexOutOfRange(index: index, count: elements.count)
        }
    }
}

extension ObservableArray {
    /// Runs several mutations as one: observers receive ONE event whose changeset describes
    /// the whole batch (survivors that changed order become the fewest possible moves).
    ///
    ///     try names.batch { batch in
    ///         batch.append("Tony")
    ///         try batch.remove(at: 0)
    ///         try batch.set("Mark", at: 0)
    ///     }
    ///
    /// `body` works on a copy, with no lock held. If another mutation lands before the batch
    /// commits, `body` runs again on the newer content, so keep it free of other side effects.
    /// If `body` throws, nothing changes and the error is thrown again with its type: a body
    /// written `{ (batch) throws(ObservableArrayError) in … }` makes `batch` throw
    /// `ObservableArrayError`, and one that does not throw needs no `try`. After termination,
    /// `body` runs once, on the final content, and its changes are dropped, as
    /// `ObservableValue.update(isolation:_:)` does; `terminalEvent` tells whether the array has
    /// terminated.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: `body` (one or more times), then observers' handlers once (none if nothing
    /// changed).
    /// - Returns: what `body` returned on the run that was committed (after termination, on its
    ///   one run).
    /// - Complexity: O(n log n) for the changeset plus what `body` does, n = count.
    @discardableResult
    public func batch<Result, Failure: Error>(
        _ body: (inout ArrayBatch<Element>) throws(Failure) -> Result,
        isolation: isolated (any Actor)? = #isolation
    ) throws(Failure) -> Result {
        try _readModifyWrite(isolation: isolation) { current throws(Failure) in
            var batch = ArrayBatch(current.array)
            let result = try body(&batch)
            let changeset = batch.changeset
            return (
                changeset.isEmpty ? nil : ArrayChange(array: batch.elements, changeset: changeset), result
            )
        }.result
    }
}
