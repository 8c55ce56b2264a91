// The item changes of a sectioned changeset, by section. Nearly every change of a sectioned array
// changes the items of one section (an append, a removal, a move inside it); a dictionary for that
// one entry was about 40% of an item append's instructions (its allocation, hashing and release),
// and every observer that read it would make one again. So one section's changes are stored
// inline, several in one array in section order, and reading makes nothing.

/// The item changes of a ``SectionedChangeset``: for each section of the new list of sections
/// whose items changed, how they changed, relative to the items that section had before.
///
/// A collection of `(key: section, value: changes)` pairs in increasing section order, with no
/// empty changes; `itemChanges[section]` looks one section up (an `Int` subscript is always a
/// section, never a position), `keys` lists the sections. Equal when they hold the same pairs,
/// however they were made (comparing and hashing are O(total changes)). It is written as a
/// dictionary literal (`[2: ArrayChangeset(inserts: [0])]`), made from a dictionary with
/// `init(_:)`, and turned into one with `dictionary`.
///
/// Unlike the dictionary it replaces, its `first` is the lowest section, `filter` returns an
/// array of pairs, and `keys.contains(_:)` is a linear scan (`self[section] != nil` is
/// O(log s)).
///
/// Thread safety: a value; `Sendable`. Callbacks: none.
public struct SectionItemChanges: Hashable, Sendable, RandomAccessCollection, CustomStringConvertible {
    /// A section's index in the new list of sections, and how its items changed.
    ///
    /// Thread safety: a value.
    public typealias Element = (key: Int, value: ArrayChangeset)

    /// A position in the collection (not a section index: look a section up with `self[section]`).
    ///
    /// Thread safety: a value; `Sendable`. Callbacks: none.
    public struct Index: Comparable, Hashable, Sendable {
        @usableFromInline
        let offset: Int

        @inlinable
        init(_ offset: Int) { self.offset = offset }

        /// Orders positions.
        ///
        /// Thread safety: pure. Callbacks: none.
        /// - Complexity: O(1).
        @inlinable
        public static func < (lhs: Index, rhs: Index) -> Bool { lhs.offset < rhs.offset }
    }

    /// One section's changes; never empty.
    @usableFromInline
    struct _Entry: Hashable, Sendable {
        @usableFromInline let section: Int
        @usableFromInline let changes: ArrayChangeset

        @inlinable
        init(section: Int, changes: ArrayChangeset) {
            self.section = section
            self.changes = changes
        }
    }

    /// Canonical, so that the synthesized `Hashable` compares the changes: `one` holds the only
    /// entry, `many` two or more in increasing section order, each section once.
    @usableFromInline
    enum _Storage: Hashable, Sendable {
        case none
        case one(_Entry)
        case many([_Entry])
    }

    @usableFromInline
    var _storage: _Storage

    /// No item changes.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public init() { _storage = .none }

    /// The changes of `dictionary`'s sections; empty changes are left out.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(s log s), s the number of entries.
    public init(_ dictionary: [Int: ArrayChangeset]) {
        self.init(_entries: dictionary.map { _Entry(section: $0.key, changes: $0.value) }, sorted: false)
    }

    /// One section's changes (none when they are empty).
    ///
    /// - Complexity: O(1).
    @inlinable
    init(section: Int, changes: ArrayChangeset) {
        _storage = changes.isEmpty ? .none : .one(_Entry(section: section, changes: changes))
    }

    /// `entries` sorted by section unless they are already; of two entries for one section the
    /// later one, then without the empty ones.
    ///
    /// - Complexity: O(s), or O(s log s) when not `sorted`.
    @usableFromInline
    init(_entries entries: [_Entry], sorted: Bool) {
        if entries.count <= 1 {  // the common case: no sorting, no array
            self =
                entries.first.map { SectionItemChanges(section: $0.section, changes: $0.changes) }
                ?? SectionItemChanges()
            return
        }
        var entries = entries
        if sorted {
            assert(
                zip(entries, entries.dropFirst()).allSatisfy { $0.section < $1.section },
                "entries said to be sorted are not: \(entries.map(\.section))")
        } else {
            // Stable, so that of two entries for one section the later stays last.
            entries = entries.enumerated().sorted {
                ($0.element.section, $0.offset) < ($1.element.section, $1.offset)
            }
            .map(\.element)
        }
        var unique: [_Entry] = []
        unique.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() {
            let next = entries.index(after: position)
            // The last entry for its section, and not empty.
            if next < entries.endIndex && entries[next].section == entry.section { continue }
            if !entry.changes.isEmpty { unique.append(entry) }
        }
        switch unique.count {
        case 0: _storage = .none
        case 1: _storage = .one(unique[0])
        default: _storage = .many(unique)
        }
    }

    /// The changes of the section at `section` (an index into the new list of sections), or `nil`
    /// if its items did not change.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1) for one section with changes, O(log s) for s.
    @inlinable
    public subscript(section: Int) -> ArrayChangeset? {
        switch _storage {
        case .none:
            return nil
        case .one(let entry):
            return entry.section == section ? entry.changes : nil
        case .many(let entries):
            var low = 0
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].section < section { low = middle + 1 } else { high = middle }
            }
            return low < entries.count && entries[low].section == section ? entries[low].changes : nil
        }
    }

    /// The sections whose items changed, in increasing order.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1); it makes no array.
    @inlinable
    public var keys: LazyMapCollection<SectionItemChanges, Int> { lazy.map { $0.key } }

    /// The changes, in increasing section order.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1); it makes no array.
    @inlinable
    public var values: LazyMapCollection<SectionItemChanges, ArrayChangeset> { lazy.map { $0.value } }

    /// The first position.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public var startIndex: Index { Index(0) }

    /// The position after the last pair.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public var endIndex: Index {
        switch _storage {
        case .none: Index(0)
        case .one: Index(1)
        case .many(let entries): Index(entries.count)
        }
    }

    /// The pair at `position`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public subscript(position: Index) -> Element {
        switch _storage {
        case .none:
            preconditionFailure("index \(position.offset) out of range of no item changes")
        case .one(let entry):
            precondition(
                position.offset == 0, "index \(position.offset) out of range of one section's item changes")
            return (entry.section, entry.changes)
        case .many(let entries):
            return (entries[position.offset].section, entries[position.offset].changes)
        }
    }

    /// The position after `position`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public func index(after position: Index) -> Index { Index(position.offset + 1) }

    /// The position before `position`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public func index(before position: Index) -> Index { Index(position.offset - 1) }

    /// The position `distance` after `position`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public func index(_ position: Index, offsetBy distance: Int) -> Index {
        Index(position.offset + distance)
    }

    /// The number of positions from `start` to `end`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public func distance(from start: Index, to end: Index) -> Int { end.offset - start.offset }

    /// Whether no section's items changed.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    @inlinable
    public var isEmpty: Bool {
        if case .none = _storage { return true }
        return false
    }

    /// Text such as `[0: inserts [2], 3: deletes [0]]`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(total changes).
    public var description: String {
        isEmpty ? "[:]" : "[" + map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
    }

    /// The pairs as a dictionary, keyed by section.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(s), s the number of sections with changes.
    public var dictionary: [Int: ArrayChangeset] {
        Dictionary(uniqueKeysWithValues: lazy.map { ($0.key, $0.value) })
    }
}

extension SectionItemChanges: ExpressibleByDictionaryLiteral {
    /// Item changes written as a dictionary literal, `[section: changes]`: of two entries for one
    /// section the later one counts (a `Dictionary` literal traps on them), and empty changes are
    /// left out.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(s log s).
    public init(dictionaryLiteral elements: (Int, ArrayChangeset)...) {
        if elements.count <= 1 {  // the common literal: no sorting, no array of entries
            self =
                elements.first.map { SectionItemChanges(section: $0.0, changes: $0.1) }
                ?? SectionItemChanges()
            return
        }
        self.init(_entries: elements.map { _Entry(section: $0.0, changes: $0.1) }, sorted: false)
    }
}
