// The single mutations of a sectioned array that need no batch: each one changes the sections in
// place and builds its one-list changeset directly, in O(1) plus the work on the list it touches,
// instead of recording the origin of every section and item. The changesets are exactly those a
// batch with the same one operation computes. (Moves stay on the batch path: there the batch's
// choice of which element moved is what observers receive.)
extension ObservableSectionedArray {
    /// Changes the sections in place under the lock, then queues the change. `body` checks its
    /// indices first and throws (changing nothing), or changes the sections and returns the
    /// changeset with what it removed or replaced, which is released after unlocking. It must
    /// not run user code.
    ///
    /// - Throws: what `body` threw, or `.terminated` once the array has terminated.
    @inlinable
    func _single<Removed>(
        _ isolation: (any Actor)?,
        _ body: (inout [ArraySection<Metadata, Item>]) throws(ObservableArrayError)
            -> (changeset: SectionedChangeset, removed: Removed)
    ) throws(ObservableArrayError) {
        // The error is part of the result, so that a nested call replayed by an outer
        // read-modify-write rethrows it.
        let outcome = _mutateCurrent(isolation: isolation) {
            change, _ -> (changed: Bool, result: Result<Removed, ObservableArrayError>) in
            do throws(ObservableArrayError) {
                return (true, .success(try change._change(body)))
            } catch {
                return (false, .failure(error))
            }
        }
        guard let outcome else { throw .terminated }
        let removed = try outcome.get()
        withExtendedLifetime(removed) {}
    }

    /// `sections: <list> [index]`.
    @inlinable
    static func _sectionChange(_ storage: ArrayChangeset._Storage) -> SectionedChangeset {
        SectionedChangeset(sections: ArrayChangeset(_storage: storage))
    }

    /// `items in section: <list> [index]`.
    @inlinable
    static func _itemChange(in section: Int, _ storage: ArrayChangeset._Storage) -> SectionedChangeset {
        SectionedChangeset(
            sections: ArrayChangeset(_storage: .empty),  // not `ArrayChangeset()`, which checks four lists
            itemChanges: SectionItemChanges(section: section, changes: ArrayChangeset(_storage: storage)))
    }

    /// Throws unless `index` is a section of `sections`.
    @inlinable
    static func _checkSection(_ index: Int, in sections: [ArraySection<Metadata, Item>])
        throws(ObservableArrayError)
    {
        guard sections.indices.contains(index) else {
            throw .indexOutOfRange(index: index, count: sections.count)
        }
    }

    /// Throws unless `path` is an item of `sections` (its section checked first).
    @inlinable
    static func _checkItem(_ path: ItemPath, in sections: [ArraySection<Metadata, Item>])
        throws(ObservableArrayError)
    {
        try _checkSection(path.section, in: sections)
        let count = sections[path.section].items.count
        guard (0..<count).contains(path.item) else { throw .indexOutOfRange(index: path.item, count: count) }
    }

    /// Inserts `section` at `index` (0...count).
    @inlinable
    func _insertSection(_ section: ArraySection<Metadata, Item>, at index: Int?, isolation: (any Actor)?)
        throws(ObservableArrayError)
    {
        try _single(isolation) { sections throws(ObservableArrayError) in
            let index = index ?? sections.count
            guard index >= 0 && index <= sections.count else {
                throw .indexOutOfRange(index: index, count: sections.count)
            }
            sections.insert(section, at: index)
            return (Self._sectionChange(.inserts([index])), ())
        }
    }

    /// Inserts `item` at `path` (an item index in 0...count), or at the end of `section`.
    @inlinable
    func _insertItem(_ item: Item, at path: ItemPath?, section: Int, isolation: (any Actor)?)
        throws(ObservableArrayError)
    {
        try _single(isolation) { sections throws(ObservableArrayError) in
            try Self._checkSection(section, in: sections)
            let count = sections[section].items.count
            let index = path?.item ?? count
            guard index >= 0 && index <= count else { throw .indexOutOfRange(index: index, count: count) }
            if index == count {
                sections[section].items.append(item)  // about 50 instructions fewer than insert(_:at:)
            } else {
                sections[section].items.insert(item, at: index)
            }
            return (Self._itemChange(in: section, .inserts([index])), ())
        }
    }
}

extension SectionedArrayChange {
    /// Runs `body` on the sections in place and stores the changeset it returns; returns what
    /// it removed or replaced. (Out of line: the setters are internal.)
    @usableFromInline
    mutating func _change<Removed>(
        _ body: (inout [ArraySection<Metadata, Item>]) throws(ObservableArrayError)
            -> (changeset: SectionedChangeset, removed: Removed)
    ) throws(ObservableArrayError) -> Removed {
        let (changeset, removed) = try body(&sections)
        self.changeset = changeset
        return removed
    }
}
