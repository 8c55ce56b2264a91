/// One batch update of a sectioned table or collection view, in the terms of
/// `performBatchUpdates`: section changes (`sections`: deletes, reloads and move sources in the
/// section indices before the batch; inserts and move targets after it) and item changes
/// (deletes, reloads and move sources at paths before the batch; inserts and move targets at
/// paths after it). An item moved to another section is one move.
///
/// Thread safety: a value; `Sendable`.
public struct SectionedBatchUpdate: Hashable, Sendable, CustomStringConvertible {
    /// An item that moved from `from` (a path before the batch) to `to` (a path after it).
    public struct ItemMove: Hashable, Sendable {
        /// The path before the batch.
        public var from: ItemPath
        /// The path after the batch.
        public var to: ItemPath

        /// A move of the item at `from` to `to`.
        ///
        /// Thread safety: a value. Callbacks: none.
        /// - Complexity: O(1).
        public init(from: ItemPath, to: ItemPath) {
            self.from = from
            self.to = to
        }
    }

    /// Section deletes, inserts, moves and reloads (`updates`).
    public var sections: ArrayChangeset
    /// Paths (before the batch) of deleted items, ascending.
    public var itemDeletes: [ItemPath]
    /// Paths (after the batch) of inserted items, ascending.
    public var itemInserts: [ItemPath]
    /// Moved items, within or across sections.
    public var itemMoves: [ItemMove]
    /// Paths (before the batch) of reloaded items, ascending.
    public var itemReloads: [ItemPath]

    /// A batch made of these changes (sorted for you).
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k log k).
    public init(
        sections: ArrayChangeset = ArrayChangeset(), itemDeletes: [ItemPath] = [],
        itemInserts: [ItemPath] = [],
        itemMoves: [ItemMove] = [], itemReloads: [ItemPath] = []
    ) {
        self.sections = sections
        self.itemDeletes = itemDeletes.sorted()
        self.itemInserts = itemInserts.sorted()
        self.itemMoves = itemMoves.sorted { $0.to < $1.to }
        self.itemReloads = itemReloads.sorted()
    }

    /// Whether the batch changes nothing.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var isEmpty: Bool {
        sections.isEmpty && itemDeletes.isEmpty && itemInserts.isEmpty && itemMoves.isEmpty
            && itemReloads.isEmpty
    }

    /// Text such as `sections: deletes [1]; items: inserts [[0, 2]]`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(k).
    public var description: String {
        var parts: [String] = []
        if !sections.isEmpty { parts.append("sections: \(sections)") }
        if !itemDeletes.isEmpty { parts.append("item deletes \(itemDeletes)") }
        if !itemInserts.isEmpty { parts.append("item inserts \(itemInserts)") }
        if !itemMoves.isEmpty {
            parts.append("item moves " + itemMoves.map { "\($0.from)→\($0.to)" }.joined(separator: ", "))
        }
        if !itemReloads.isEmpty { parts.append("item reloads \(itemReloads)") }
        return parts.isEmpty ? "no change" : parts.joined(separator: "; ")
    }
}

/// A stage of a sectioned change: the sections a data source shows after it, and the batch
/// update that gets a view there from the previous stage.
///
/// Thread safety: a value; `Sendable` when its parts are.
public struct SectionedStage<Metadata, Item> {
    /// The sections after this stage.
    public var sections: [ArraySection<Metadata, Item>]
    /// The batch update from the previous stage's sections (or the old ones) to `sections`.
    public var update: SectionedBatchUpdate

    /// A stage showing `sections`, reached with `update`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(sections: [ArraySection<Metadata, Item>], update: SectionedBatchUpdate) {
        self.sections = sections
        self.update = update
    }
}

extension SectionedStage: Sendable where Metadata: Sendable, Item: Sendable {}

/// The changes from one list of sections to another as stages, each valid for ONE
/// `performBatchUpdates` (see `StagedChangeset` for the rules), in this order:
///
/// 1. section deletes and item deletes (indices before the change);
/// 2. section inserts (with their items) and section moves;
/// 3. item inserts and item moves, within and across sections (an item that moved to another
///    section is a move, not a delete plus an insert);
/// 4. reloads: sections whose metadata changed and items whose content changed, at their final
///    indices.
///
/// Stages with nothing to do are left out.
///
/// Thread safety: a value; `Sendable` when its parts are.
public struct StagedSectionedChangeset<Metadata, Item> {
    /// The stages, in order; empty when nothing changed.
    public let stages: [SectionedStage<Metadata, Item>]

    /// Stages made of these, as they are.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(stages: [SectionedStage<Metadata, Item>]) {
        self.stages = stages
    }

    /// Whether there is nothing to apply.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var isEmpty: Bool { stages.isEmpty }
}

extension StagedSectionedChangeset: Sendable where Metadata: Sendable, Item: Sendable {}
