/// A section of a sectioned array: metadata (a header and footer, say) and items.
///
/// Thread safety: a value type; `Sendable` when its parts are.
public struct ArraySection<Metadata, Item> {
    /// What describes the section, e.g. its header and footer titles.
    public var metadata: Metadata
    /// The items of the section, in order.
    public var items: [Item]

    /// A section with `metadata` and `items`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(metadata: Metadata, items: [Item]) {
        self.metadata = metadata
        self.items = items
    }
}

extension ArraySection: Sendable where Metadata: Sendable, Item: Sendable {}
extension ArraySection: Equatable where Metadata: Equatable, Item: Equatable {}

/// The position of an item: its section and its index in that section.
///
/// Thread safety: a value; `Sendable`.
public struct ItemPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The section index.
    public var section: Int
    /// The item index within the section.
    public var item: Int

    /// The item at `item` in section `section`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// Orders by section, then item.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    /// `[section, item]`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String { "[\(section), \(item)]" }
}

/// How a sectioned array changed.
///
/// - `sections`: the changes to the list of sections (indices as in `ArrayChangeset`); a section
///   whose metadata changed is an update.
/// - `itemChanges`: for each section of the NEW array that was not inserted, how its items
///   changed, relative to the items that section had before (only sections with changes are
///   listed, in section order; `itemChanges[section]` looks one up). An item that moved to
///   another section is a delete there and an insert here. An inserted section brings all of its
///   items with it.
///
/// Thread safety: a value; `Sendable`.
public struct SectionedChangeset: Hashable, Sendable, CustomStringConvertible {
    /// Changes to the list of sections.
    public internal(set) var sections: ArrayChangeset
    /// Item changes, by section of the new list of sections, in increasing section order.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1); a lookup by section is O(log s).
    public internal(set) var itemChanges: SectionItemChanges

    /// Item changes, keyed by new section index, as a dictionary made at each read.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(s), s the number of sections with item changes.
    @available(
        *, deprecated, renamed: "itemChanges",
        message:
            "itemChanges reads the same changes without making a dictionary; itemChanges.dictionary makes one"
    )
    public var items: [Int: ArrayChangeset] { itemChanges.dictionary }

    /// A changeset made of section changes and per-section item changes.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(
        sections: ArrayChangeset = ArrayChangeset(), itemChanges: SectionItemChanges = SectionItemChanges()
    ) {
        self.sections = sections
        self.itemChanges = itemChanges
    }

    /// A changeset made of section changes and per-section item changes; empty item changes are
    /// left out.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(s log s), s the number of entries in `items`.
    @available(
        *, deprecated, renamed: "init(sections:itemChanges:)",
        message: "pass a dictionary literal as it is, or SectionItemChanges(dictionary) for a dictionary"
    )
    public init(sections: ArrayChangeset = ArrayChangeset(), items: [Int: ArrayChangeset]) {
        self.init(sections: sections, itemChanges: SectionItemChanges(items))
    }

    /// Whether nothing changed.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var isEmpty: Bool { sections.isEmpty && itemChanges.isEmpty }

    /// Text such as `sections: inserts [1]; items in 0: deletes [2]`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k log k).
    public var description: String {
        var parts: [String] = []
        if !sections.isEmpty { parts.append("sections: \(sections)") }
        for (section, changes) in itemChanges { parts.append("items in \(section): \(changes)") }
        return parts.isEmpty ? "no change" : parts.joined(separator: "; ")
    }

    /// Applies the changeset to `old`: kept sections keep their metadata and items unless
    /// updated; inserted sections, updated metadata and inserted or updated items come from
    /// `newSections`. For a changeset that describes old → new, the result equals
    /// `newSections`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ArrayChangesetError` if it does not fit the arrays.
    /// - Complexity: O(total number of sections and items).
    public func apply<Metadata, Item>(
        to old: [ArraySection<Metadata, Item>], newSections: [ArraySection<Metadata, Item>]
    ) throws(ArrayChangesetError) -> [ArraySection<Metadata, Item>] {
        try sections.validate(oldCount: old.count, newCount: newSections.count)
        let (origins, updated) = sections.origins(oldCount: old.count, newCount: newSections.count)
        for section in itemChanges.keys where !(origins.indices.contains(section) && origins[section] != nil)
        {
            throw ArrayChangesetError(problem: "item changes for section \(section), which is new or absent")
        }
        var result: [ArraySection<Metadata, Item>] = []
        result.reserveCapacity(newSections.count)
        for (position, origin) in origins.enumerated() {
            guard let origin else {
                result.append(newSections[position])
                continue
            }
            let metadata = updated[origin] ? newSections[position].metadata : old[origin].metadata
            var sectionItems = old[origin].items
            if let changes = itemChanges[position] {
                sectionItems = try changes.apply(to: sectionItems, newElements: newSections[position].items)
            } else if sectionItems.count != newSections[position].items.count {
                throw ArrayChangesetError(
                    problem: "section \(position) changed its items without item changes")
            }
            result.append(ArraySection(metadata: metadata, items: sectionItems))
        }
        return result
    }
}

/// The sections after a change, and how they got there.
///
/// Thread safety: a value type; `Sendable` when its parts are.
public struct SectionedArrayChange<Metadata, Item> {
    /// The sections after the change.
    public internal(set) var sections: [ArraySection<Metadata, Item>]
    /// How they differ from the previous sections.
    public internal(set) var changeset: SectionedChangeset

    @usableFromInline
    init(sections: [ArraySection<Metadata, Item>], changeset: SectionedChangeset) {
        self.sections = sections
        self.changeset = changeset
    }
}

extension SectionedArrayChange: Sendable where Metadata: Sendable, Item: Sendable {}

/// The working copy a sectioned batch edits, recording where each section and item came from.
///
/// Thread safety: a value, used inside `ObservableSectionedArray.batch(_:)` only.
public struct SectionedBatch<Metadata, Item> {
    /// The sections as the batch has left them so far.
    public private(set) var sections: [ArraySection<Metadata, Item>]
    private var sectionOrigins: [Int?]
    private var itemOrigins: [[ItemPath?]]
    private var updatedMetadata = Set<Int>()
    private var updatedItems = Set<ItemPath>()
    private let oldItemCounts: [Int]

    init(_ sections: [ArraySection<Metadata, Item>]) {
        self.sections = sections
        sectionOrigins = sections.indices.map { Optional($0) }
        itemOrigins = sections.enumerated().map { section, content in
            content.items.indices.map { ItemPath(section: section, item: $0) }
        }
        oldItemCounts = sections.map(\.items.count)
    }

    /// Appends a section.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(items in it).
    public mutating func appendSection(_ section: ArraySection<Metadata, Item>) {
        sections.append(section)
        sectionOrigins.append(nil)
        itemOrigins.append(Array(repeating: nil, count: section.items.count))
    }

    /// Inserts a section at `index` (0...sections.count).
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(sections + items in it).
    public mutating func insertSection(_ section: ArraySection<Metadata, Item>, at index: Int)
        throws(ObservableArrayError)
    {
        guard index >= 0 && index <= sections.count else {
            throw .indexOutOfRange(index: index, count: sections.count)
        }
        sections.insert(section, at: index)
        sectionOrigins.insert(nil, at: index)
        itemOrigins.insert(Array(repeating: nil, count: section.items.count), at: index)
    }

    /// Removes and returns the section at `index`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(sections).
    @discardableResult
    public mutating func removeSection(at index: Int) throws(ObservableArrayError) -> ArraySection<
        Metadata, Item
    > {
        try checkSection(index)
        sectionOrigins.remove(at: index)
        itemOrigins.remove(at: index)
        return sections.remove(at: index)
    }

    /// Moves the section at `source` so that it ends up at `destination`, with its items.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(sections).
    public mutating func moveSection(from source: Int, to destination: Int) throws(ObservableArrayError) {
        try checkSection(source)
        try checkSection(destination)
        sections.insert(sections.remove(at: source), at: destination)
        sectionOrigins.insert(sectionOrigins.remove(at: source), at: destination)
        itemOrigins.insert(itemOrigins.remove(at: source), at: destination)
    }

    /// Replaces the metadata of section `index`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(1).
    public mutating func setMetadata(_ metadata: Metadata, at index: Int) throws(ObservableArrayError) {
        try checkSection(index)
        sections[index].metadata = metadata
        if let origin = sectionOrigins[index] { updatedMetadata.insert(origin) }
    }

    /// Appends `item` to section `section`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: amortized O(1).
    public mutating func appendItem(_ item: Item, toSection section: Int) throws(ObservableArrayError) {
        try checkSection(section)
        try insertItem(item, at: ItemPath(section: section, item: sections[section].items.count))
    }

    /// Inserts `item` at `path` (its item index in 0...count of that section).
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(items in the section).
    public mutating func insertItem(_ item: Item, at path: ItemPath) throws(ObservableArrayError) {
        try checkSection(path.section)
        let count = sections[path.section].items.count
        guard path.item >= 0 && path.item <= count else {
            throw .indexOutOfRange(index: path.item, count: count)
        }
        sections[path.section].items.insert(item, at: path.item)
        itemOrigins[path.section].insert(nil, at: path.item)
    }

    /// Removes and returns the item at `path`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(items in the section).
    @discardableResult
    public mutating func removeItem(at path: ItemPath) throws(ObservableArrayError) -> Item {
        try checkItem(path)
        itemOrigins[path.section].remove(at: path.item)
        return sections[path.section].items.remove(at: path.item)
    }

    /// Replaces the item at `path`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(1).
    public mutating func setItem(_ item: Item, at path: ItemPath) throws(ObservableArrayError) {
        try checkItem(path)
        sections[path.section].items[path.item] = item
        if let origin = itemOrigins[path.section][path.item] { updatedItems.insert(origin) }
    }

    /// Moves the item at `source` to `destination`, within a section or across sections. The
    /// destination index counts the items after the removal at `source`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)`; nothing changes.
    /// - Complexity: O(items in the two sections).
    public mutating func moveItem(from source: ItemPath, to destination: ItemPath)
        throws(ObservableArrayError)
    {
        try checkItem(source)
        try checkSection(destination.section)
        let limit =
            sections[destination.section].items.count - (source.section == destination.section ? 1 : 0)
        guard destination.item >= 0 && destination.item <= limit else {
            throw .indexOutOfRange(index: destination.item, count: limit)
        }
        let item = sections[source.section].items.remove(at: source.item)
        let origin = itemOrigins[source.section].remove(at: source.item)
        sections[destination.section].items.insert(item, at: destination.item)
        itemOrigins[destination.section].insert(origin, at: destination.item)
    }

    /// The one changeset of the whole batch.
    var changeset: SectionedChangeset {
        let sectionChanges = ArrayChangeset.fromOrigins(
            sectionOrigins, oldCount: oldItemCounts.count, updated: updatedMetadata)
        let inserted = Set(sectionChanges.inserts)
        var items: [SectionItemChanges._Entry] = []
        for (position, origin) in sectionOrigins.enumerated() {
            guard let origin, !inserted.contains(position) else { continue }
            var updated = Set<Int>()
            let origins = itemOrigins[position].map { path -> Int? in
                guard let path, path.section == origin else { return nil }
                if updatedItems.contains(path) { updated.insert(path.item) }
                return path.item
            }
            let changes = ArrayChangeset.fromOrigins(
                origins, oldCount: oldItemCounts[origin], updated: updated)
            if !changes.isEmpty {
                items.append(SectionItemChanges._Entry(section: position, changes: changes))
            }
        }
        return SectionedChangeset(
            sections: sectionChanges, itemChanges: SectionItemChanges(_entries: items, sorted: true))
    }

    private func checkSection(_ index: Int) throws(ObservableArrayError) {
        guard sections.indices.contains(index) else {
            throw .indexOutOfRange(index: index, count: sections.count)
        }
    }

    private func checkItem(_ path: ItemPath) throws(ObservableArrayError) {
        try checkSection(path.section)
        let count = sections[path.section].items.count
        guard (0..<count).contains(path.item) else { throw .indexOutOfRange(index: path.item, count: count) }
    }
}

/// A two-dimensional observable array: sections with metadata and items. Each change delivers
/// the new sections with a `SectionedChangeset` (section changes and per-section item changes).
///
///     let table = ObservableSectionedArray<String, String>([
///         ArraySection(metadata: "Cities", items: ["Paris", "Berlin"])])
///     try table.appendItem("Copenhagen", toSection: 0)   // items in 0: inserts [2]
///     table.appendSection(ArraySection(metadata: "Countries", items: ["France"]))  // sections: inserts [1]
///
/// Every mutation, single or batched, goes through the same origin tracking, so every changeset
/// is exact. A new observer first receives all sections as inserts. Delivery order, reentrancy,
/// tokens and termination follow `GraphEventSource`.
///
/// Thread safety: `Sendable`; every member is safe from any thread.
public final class ObservableSectionedArray<Metadata: Sendable, Item: Sendable>:
    GraphEventSource<SectionedArrayChange<Metadata, Item>>, @unchecked Sendable
{
    /// A sectioned array holding `sections`.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1).
    public init(_ sections: [ArraySection<Metadata, Item>] = []) {
        super.init(current: SectionedArrayChange(sections: sections, changeset: SectionedChangeset()))
    }

    override func _replayValue(_ current: SectionedArrayChange<Metadata, Item>) -> SectionedArrayChange<
        Metadata, Item
    > {
        SectionedArrayChange(
            sections: current.sections,
            changeset: SectionedChangeset(sections: .reload(oldCount: 0, newCount: current.sections.count)))
    }

    /// The sections now.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) (copy-on-write).
    public var sections: [ArraySection<Metadata, Item>] {
        _snapshot().value.sections
    }

    /// Runs several mutations as one: observers receive one event with one changeset.
    ///
    /// `body` works on a copy with no lock held and runs again if another mutation landed
    /// meanwhile (keep it free of other side effects). If it throws, nothing changes and the
    /// error is thrown again with its type (`throws(ObservableArrayError)` on a body that only
    /// calls the batch's operations keeps that type). After termination, `body` runs once, on
    /// the final sections, and its changes are dropped, as `ObservableValue.update(isolation:_:)`
    /// does; `terminalEvent` tells whether the array has terminated.
    ///
    /// Thread safety: safe from any thread.
    /// Callbacks: `body`, then observers' handlers once (none if nothing changed).
    /// - Returns: what `body` returned on the run that was committed (after termination, on its
    ///   one run).
    /// - Complexity: O(total sections and items) plus what `body` does.
    @discardableResult
    public func batch<Result, Failure: Error>(
        _ body: (inout SectionedBatch<Metadata, Item>) throws(Failure) -> Result,
        isolation: isolated (any Actor)? = #isolation
    ) throws(Failure) -> Result {
        try _readModifyWrite(isolation: isolation) { current throws(Failure) in
            var batch = SectionedBatch(current.sections)
            let result = try body(&batch)
            let changeset = batch.changeset
            guard !changeset.isEmpty else { return (nil, result) }
            return (SectionedArrayChange(sections: batch.sections, changeset: changeset), result)
        }.result
    }

    /// Appends a section: `sections: inserts [count]`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Returns: `false` (and changes nothing) if the array has terminated, as
    ///   `ObservableArray.append(_:isolation:)`.
    /// - Complexity: amortized O(1) plus the delivery.
    @inlinable @discardableResult
    public func appendSection(
        _ section: ArraySection<Metadata, Item>, isolation: isolated (any Actor)? = #isolation
    ) -> Bool {
        // Appending cannot be out of range: the only error left is the termination.
        (try? _insertSection(section, at: nil, isolation: isolation)) != nil
    }

    /// Inserts a section at `index`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(sections) plus the delivery.
    @inlinable
    public func insertSection(
        _ section: ArraySection<Metadata, Item>, at index: Int, isolation: isolated (any Actor)? = #isolation
    )
        throws(ObservableArrayError)
    {
        try _insertSection(section, at: index, isolation: isolation)
    }

    /// Removes the section at `index`, with its items.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(sections) plus the delivery.
    @inlinable
    public func removeSection(at index: Int, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _single(isolation) { sections throws(ObservableArrayError) in
            try Self._checkSection(index, in: sections)
            let removed = sections.remove(at: index)
            return (Self._sectionChange(.deletes([index])), removed)
        }
    }

    /// Moves the section at `source` to `destination`, with its items.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(total sections and items).
    public func moveSection(
        from source: Int, to destination: Int, isolation: isolated (any Actor)? = #isolation
    ) throws(ObservableArrayError) {
        try typed(isolation) { batch throws(ObservableArrayError) in
            try batch.moveSection(from: source, to: destination)
        }
    }

    /// Replaces the metadata of section `index`: `sections: updates [index]`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(1) plus the delivery.
    @inlinable
    public func setMetadata(
        _ metadata: Metadata, at index: Int, isolation: isolated (any Actor)? = #isolation
    ) throws(ObservableArrayError) {
        try _single(isolation) { sections throws(ObservableArrayError) in
            try Self._checkSection(index, in: sections)
            let replaced = sections[index].metadata
            sections[index].metadata = metadata
            return (Self._sectionChange(.updates([index])), replaced)
        }
    }

    /// Appends an item to a section: `items in section: inserts [count]`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: amortized O(1) plus the delivery.
    @inlinable
    public func appendItem(
        _ item: Item, toSection section: Int, isolation: isolated (any Actor)? = #isolation
    ) throws(ObservableArrayError) {
        try _insertItem(item, at: nil, section: section, isolation: isolation)
    }

    /// Inserts an item at `path`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(items in the section) plus the delivery.
    @inlinable
    public func insertItem(_ item: Item, at path: ItemPath, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _insertItem(item, at: path, section: path.section, isolation: isolation)
    }

    /// Removes the item at `path`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(items in the section) plus the delivery.
    @inlinable
    public func removeItem(at path: ItemPath, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _single(isolation) { sections throws(ObservableArrayError) in
            try Self._checkItem(path, in: sections)
            let removed = sections[path.section].items.remove(at: path.item)
            return (Self._itemChange(in: path.section, .deletes([path.item])), removed)
        }
    }

    /// Replaces the item at `path`: `items in section: updates [item]`.
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(1) plus the delivery.
    @inlinable
    public func setItem(_ item: Item, at path: ItemPath, isolation: isolated (any Actor)? = #isolation)
        throws(ObservableArrayError)
    {
        try _single(isolation) { sections throws(ObservableArrayError) in
            try Self._checkItem(path, in: sections)
            let replaced = sections[path.section].items[path.item]
            sections[path.section].items[path.item] = item
            return (Self._itemChange(in: path.section, .updates([path.item])), replaced)
        }
    }

    /// Moves an item, within or across sections (across: a delete there and an insert here).
    ///
    /// Thread safety: safe from any thread. Callbacks: observers' handlers.
    /// - Throws: `ObservableArrayError.indexOutOfRange(index:count:)` or `.terminated`; nothing changes.
    /// - Complexity: O(total sections and items).
    public func moveItem(
        from source: ItemPath, to destination: ItemPath, isolation: isolated (any Actor)? = #isolation
    ) throws(ObservableArrayError) {
        try typed(isolation) { batch throws(ObservableArrayError) in
            try batch.moveItem(from: source, to: destination)
        }
    }

    /// A batch whose body throws only `ObservableArrayError`, and `.terminated` after termination.
    private func typed(
        _ isolation: (any Actor)?,
        _ body: (inout SectionedBatch<Metadata, Item>) throws(ObservableArrayError) -> Void
    ) throws(ObservableArrayError) {
        let accepted = try _readModifyWrite(isolation: isolation) {
            current throws(ObservableArrayError) in
            var batch = SectionedBatch(current.sections)
            try body(&batch)
            let changeset = batch.changeset
            guard !changeset.isEmpty else { return (nil, ()) }
            return (SectionedArrayChange(sections: batch.sections, changeset: changeset), ())
        }.accepted
        // Decided in the same critical section as the commit: a termination that lands first is
        // reported, never a silently dropped change.
        guard accepted else { throw .terminated }
    }
}
