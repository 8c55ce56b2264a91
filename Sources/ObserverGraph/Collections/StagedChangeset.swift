/// The changes from one array to another as a sequence of stages, each of which a table or
/// collection view can apply in ONE `performBatchUpdates` without breaking its rules:
///
/// - a stage's `changeset` uses the index rules of batch updates (deletes, reloads and move
///   sources in the indices before the stage; inserts and move targets in the indices after it),
///   no index is used twice, and the counts add up;
/// - reloads (`updates`) are never in the same stage as moves: an element that changed and
///   moved is moved in the first stage and reloaded, at its new index, in the second;
/// - each stage carries the array the data source must show after it (`stage.array`), so the
///   view's counts match at the end of every batch.
///
/// Recipe (UIKit): for each stage, set the data source to `stage.array`, then call
/// `performBatchUpdates` with `deleteItems(at: changeset.deletes)`, `insertItems(at: inserts)`,
/// `moveItem(at: from, to: to)` for each move and `reloadItems(at: updates)`.
///
/// Thread safety: a value; `Sendable` when `Element` is.
public struct StagedChangeset<Element> {
    /// The stages, in order; empty when nothing changed. At most two: a structural stage
    /// (deletes, inserts, moves, and reloads when nothing moves) and a reload stage.
    public let stages: [ArrayChange<Element>]

    /// Stages made of these changes, as they are. Check them with the batch-update validator of
    /// `ObserverGraphTesting`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(stages: [ArrayChange<Element>]) {
        self.stages = stages
    }

    /// The stages of an observed change: `changeset` turns `old` into `new` (as an
    /// `ObservableArray` delivers it). A changeset with both moves and updates is split in two.
    ///
    /// A changeset that cannot turn `old` into `new` (an index out of range, counts that do not
    /// add up: see `ArrayChangeset.validate(oldCount:newCount:)`), such as one paired with the
    /// wrong arrays, is staged as a full reload: one stage that deletes every old element and
    /// inserts every new one, so what is shown still ends up as `new`. Call `validate` first to
    /// catch the mistake instead.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(old.count + new.count + k), k = the changes in `changeset`.
    public init(_ changeset: ArrayChangeset, from old: [Element], to new: [Element]) {
        do {
            try changeset.validate(oldCount: old.count, newCount: new.count)
        } catch {
            let reload = ArrayChangeset.reload(oldCount: old.count, newCount: new.count)
            self.init(stages: reload.isEmpty ? [] : [ArrayChange(array: new, changeset: reload)])
            return
        }
        guard !changeset.isEmpty else {
            self.init(stages: [])
            return
        }
        guard !changeset.moves.isEmpty && !changeset.updates.isEmpty else {
            self.init(stages: [ArrayChange(array: new, changeset: changeset)])
            return
        }
        let structural = ArrayChangeset(
            sortedDeletes: changeset.deletes, inserts: changeset.inserts, updates: [], moves: changeset.moves)
        let (origins, _) = changeset.origins(oldCount: old.count, newCount: new.count)
        var updated = [Bool](repeating: false, count: old.count)
        for index in changeset.updates { updated[index] = true }
        self.init(
            origins: origins.map { $0 ?? -1 }, updated: updated, structural: structural, old: old, new: new)
    }

    /// Stage 1 is `structural` (no reloads); stage 2 reloads, at their new indices, the elements
    /// whose `updated` flag is set.
    @inlinable
    init(origins: [Int], updated: [Bool], structural: ArrayChangeset, old: [Element], new: [Element]) {
        var intermediate = new
        var reloads: [Int] = []
        for (position, origin) in origins.enumerated() where origin >= 0 && updated[origin] {
            intermediate[position] = old[origin]
            reloads.append(position)
        }
        var stages: [ArrayChange<Element>] = []
        if !structural.isEmpty { stages.append(ArrayChange(array: intermediate, changeset: structural)) }
        if !reloads.isEmpty {
            stages.append(
                ArrayChange(
                    array: new,
                    changeset: ArrayChangeset(sortedDeletes: [], inserts: [], updates: reloads, moves: [])))
        }
        self.init(stages: stages)
    }

    /// Whether there is nothing to apply.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var isEmpty: Bool { stages.isEmpty }
}

extension StagedChangeset: Sendable where Element: Sendable {}
extension StagedChangeset: Equatable where Element: Equatable {}

extension StagedChangeset where Element: Equatable {
    /// The stages from `old` to `new`, matching elements by identity (`id`) and comparing
    /// contents with `==`: a changed element is a reload, never a delete plus an insert, also
    /// when it moved (it moves in the first stage and reloads in the second). Deletes and
    /// inserts are the fewest for the matching, and so are moves (see `ArrayChangeset.diff`).
    ///
    ///     let staged = StagedChangeset(from: rows, to: fresh, identifiedBy: \.id)
    ///     for stage in staged.stages { /* set data = stage.array; performBatchUpdates */ }
    ///
    /// Thread safety: pure. Callbacks: `id`, `==` of `Element`.
    /// - Complexity: as `ArrayChangeset.diff(from:to:identifiedBy:)`.
    @inlinable
    public init<ID: Hashable>(from old: [Element], to new: [Element], identifiedBy id: (Element) -> ID) {
        let (origins, updated) = ArrayDiff.identifiedOrigins(old, new, identifiedBy: id)
        self.init(origins: origins, updated: updated, old: old, new: new)
    }

    @inlinable
    init(origins: [Int], updated: [Bool], old: [Element], new: [Element]) {
        let everything = ArrayChangeset.fromOrigins(origins, oldCount: old.count, updated: nil)
        if everything.moves.isEmpty {
            // Nothing moves: one stage, reloads included (in old indices).
            let withUpdates = ArrayChangeset.fromOrigins(origins, oldCount: old.count, updated: updated)
            self.init(stages: withUpdates.isEmpty ? [] : [ArrayChange(array: new, changeset: withUpdates)])
        } else {
            self.init(origins: origins, updated: updated, structural: everything, old: old, new: new)
        }
    }
}

extension StagedChangeset where Element: Hashable {
    /// The stages from `old` to `new` for elements that are their own identity: one stage of
    /// deletes, inserts and moves (there are no reloads). See `ArrayChangeset.diff(from:to:)`.
    ///
    /// Thread safety: pure. Callbacks: `==`, `hash(into:)` of `Element`.
    /// - Complexity: as `ArrayChangeset.diff(from:to:)`.
    @inlinable
    public init(from old: [Element], to new: [Element]) {
        let changeset = ArrayChangeset.diff(from: old, to: new)
        self.init(stages: changeset.isEmpty ? [] : [ArrayChange(array: new, changeset: changeset)])
    }
}
