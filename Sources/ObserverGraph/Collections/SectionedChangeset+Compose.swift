// Composing the changesets of several changes of a sectioned array into one: what a coalesced
// observation of a sectioned array (`ObservableSectionedArray.observeCoalesced(isolation:_:)`)
// delivers when changes came faster than its actor took them.

/// The changes of a sectioned array an observer has not received yet, composed: the list of
/// sections as an array's changes are (`_ComposedArrayChanges`), and the items of each section
/// the observer saw, by that section's index then. A value; no lock, no user code.
///
/// A change's item changes are keyed by the section's new index: the section list's composition
/// maps that index back to the section's index when the observer saw it (sections inserted since
/// have no item changes: they come whole). When the changes are taken, each section still there
/// gets its composed item changes at its new index, unless the section list's changeset deletes
/// and inserts it (a section that moved and whose metadata changed comes whole, as a new one).
@usableFromInline
struct _ComposedSectionedChanges {
    /// The list of sections.
    private var sections: _ComposedArrayChanges
    /// The item changes of each section the observer saw, by its index then (`nil`: none since
    /// the last call). An array, not a dictionary: a change finds its section's entry without
    /// hashing (hashing and a dictionary's accessors were most of a change's cost). It grows to
    /// the largest index that has had item changes and is kept from call to call.
    private var items: [_ComposedArrayChanges?] = []
    /// The indices of `items` that are not `nil`, in the order of their first change.
    private var touched: [Int] = []

    /// No pending change, from `count` sections.
    ///
    /// - Complexity: O(1).
    @usableFromInline
    init(sectionCount count: Int) {
        sections = _ComposedArrayChanges(count: count)
    }

    /// Whether no change is pending.
    @usableFromInline
    var isEmpty: Bool { sections.isEmpty && touched.isEmpty }

    /// Adds `changeset`, a valid change of the sections after the pending ones; `itemCount(p)`
    /// is the number of items of section `p` after it (read only for a section whose items
    /// change for the first time since the observer's last call).
    ///
    /// - Complexity: the list of sections' composition (`_ComposedArrayChanges.add(_:)`), then,
    ///   for each section whose items change, O(1) to find its first index (after exactly one
    ///   change of the list that is not an append: O(sections) once) and the item changes'
    ///   composition.
    @usableFromInline
    mutating func add(_ changeset: SectionedChangeset, itemCount: (Int) -> Int) {
        if changeset.isEmpty { return }
        sections.add(changeset.sections)
        for (position, changes) in changeset.itemChanges {
            guard let origin = sections.origin(at: position) else { continue }  // new: comes whole
            if origin >= items.count {
                items.append(contentsOf: repeatElement(nil, count: origin + 1 - items.count))
            }
            if case .none = items[origin] {
                items[origin] = _ComposedArrayChanges(count: itemCount(position) - changes._growth)
                touched.append(origin)
            }
            items[origin]!.add(changes)  // in place
        }
    }

    /// The composed changeset, from the sections the observer saw last to the sections after the
    /// pending changes; afterwards nothing is pending.
    ///
    /// - Complexity: the list of sections' `take()`, plus O(sections) when sections with item
    ///   changes moved or were removed, plus each such section's item changes' `take()`.
    @usableFromInline
    mutating func take() -> SectionedChangeset {
        guard !touched.isEmpty else { return SectionedChangeset(sections: sections.take()) }
        let positions = sections.positions()
        let sectionChanges = sections.take()
        let wholeSections = Set(sectionChanges.inserts)
        var itemChanges: [SectionItemChanges._Entry] = []
        itemChanges.reserveCapacity(touched.count)
        for origin in touched {
            guard var changes = items[origin].take() else { continue }
            let position = positions?[origin] ?? origin
            guard position >= 0, !wholeSections.contains(position) else { continue }
            itemChanges.append(SectionItemChanges._Entry(section: position, changes: changes.take()))
        }
        touched.removeAll(keepingCapacity: true)
        return SectionedChangeset(
            sections: sectionChanges, itemChanges: SectionItemChanges(_entries: itemChanges, sorted: false))
    }
}

/// What a coalesced observation of a sectioned array composes (see `_Coalescer`).
@usableFromInline
struct _SectionedComposer<Metadata: Sendable, Item: Sendable>: _ChangeComposer {
    @usableFromInline var changes: _ComposedSectionedChanges

    @inlinable
    init(from change: SectionedArrayChange<Metadata, Item>) {
        changes = _ComposedSectionedChanges(sectionCount: change.sections.count)
    }

    @inlinable
    init() {
        changes = _ComposedSectionedChanges(sectionCount: 0)
    }

    @inlinable
    var isEmpty: Bool { changes.isEmpty }

    @inlinable
    mutating func add(_ change: SectionedArrayChange<Metadata, Item>) -> SectionedArrayChange<Metadata, Item>?
    {
        changes.add(change.changeset) { change.sections[$0].items.count }
        return nil
    }

    @inlinable
    mutating func take(with current: SectionedArrayChange<Metadata, Item>) -> SectionedArrayChange<
        Metadata, Item
    > {
        SectionedArrayChange(sections: current.sections, changeset: changes.take())
    }

    @inlinable
    static func isUnchanged(_ change: SectionedArrayChange<Metadata, Item>) -> Bool {
        change.changeset.isEmpty
    }
}
