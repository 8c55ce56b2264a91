import ObserverGraph

/// A rule of table and collection view batch updates that a stage broke.
///
/// Thread safety: a value; `Sendable`.
public struct BatchUpdateViolation: Error, Equatable, Sendable, CustomStringConvertible {
    /// The rules the validator models (those `performBatchUpdates` enforces by raising an
    /// exception, plus the kit's own: no reloads next to moves, no stale content).
    public enum Rule: String, Sendable {
        /// A delete, reload or move source outside the items before the batch, or an insert or
        /// move target outside the items after it.
        case indexOutOfRange
        /// An index before the batch deleted, reloaded or moved twice (e.g. deleted and reloaded).
        case oldIndexUsedTwice
        /// An index after the batch inserted or moved to twice.
        case newIndexUsedTwice
        /// The number of items after the batch is not the number before, minus deletes, plus
        /// inserts (and per section, minus moves out, plus moves in); or a count given is
        /// negative.
        case countMismatch
        /// Reloads in the same batch as moves (UIKit may animate them wrongly or raise).
        case reloadWithMove
        /// A section was changed (deleted, reloaded, moved or inserted) in a batch that also
        /// changes items in it; item changes must come in another stage.
        case itemChangeInChangedSection
        /// After the batch the view would show an old value where the data source has a new one
        /// (a changed element that was neither reloaded, inserted nor moved-and-reloaded).
        case staleContent
        /// Applying all stages does not give the target.
        case wrongResult
    }

    /// The stage (0-based) that broke the rule.
    public let stage: Int
    /// The rule.
    public let rule: Rule
    /// What exactly happened.
    public let detail: String

    /// A violation of `rule` in `stage`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public init(stage: Int, rule: Rule, detail: String) {
        self.stage = stage
        self.rule = rule
        self.detail = detail
    }

    /// `stage 1: oldIndexUsedTwice: ...`.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String { "stage \(stage): \(rule.rawValue): \(detail)" }
}

/// A pure model of the rules of `UITableView`/`UICollectionView` `performBatchUpdates`, to check
/// on Linux, in tests, that changesets can drive a table view without raising.
///
/// Thread safety: stateless; every function is pure.
public enum BatchUpdateValidator {
    /// Checks one batch of a single section: `changeset` applied to `oldCount` items gives
    /// `newCount` items. Deletes, reloads (`updates`) and move sources are indices before the
    /// batch; inserts and move targets, after it. A negative count is a `countMismatch`.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Throws: the first `BatchUpdateViolation` found (with `stage`).
    /// - Complexity: O(oldCount + newCount + k).
    public static func validate(_ changeset: ArrayChangeset, oldCount: Int, newCount: Int, stage: Int = 0)
        throws(BatchUpdateViolation)
    {
        func fail(_ rule: BatchUpdateViolation.Rule, _ detail: String) -> BatchUpdateViolation {
            BatchUpdateViolation(stage: stage, rule: rule, detail: detail)
        }
        guard oldCount >= 0 && newCount >= 0 else {
            throw fail(.countMismatch, "a negative count: \(oldCount) items before, \(newCount) after")
        }
        if !changeset.updates.isEmpty && !changeset.moves.isEmpty {
            throw fail(
                .reloadWithMove, "\(changeset.updates.count) reloads with \(changeset.moves.count) moves")
        }
        var oldUsed = [Bool](repeating: false, count: max(0, oldCount))
        let olds =
            changeset.deletes.map { ($0, "delete") } + changeset.updates.map { ($0, "reload") }
            + changeset.moves.map { ($0.from, "move from") }
        for (index, what) in olds {
            guard index >= 0 && index < oldCount else {
                throw fail(.indexOutOfRange, "\(what) \(index) with \(oldCount) items before")
            }
            guard !oldUsed[index] else { throw fail(.oldIndexUsedTwice, "\(what) \(index)") }
            oldUsed[index] = true
        }
        var newUsed = [Bool](repeating: false, count: max(0, newCount))
        let news = changeset.inserts.map { ($0, "insert") } + changeset.moves.map { ($0.to, "move to") }
        for (index, what) in news {
            guard index >= 0 && index < newCount else {
                throw fail(.indexOutOfRange, "\(what) \(index) with \(newCount) items after")
            }
            guard !newUsed[index] else { throw fail(.newIndexUsedTwice, "\(what) \(index)") }
            newUsed[index] = true
        }
        guard oldCount - changeset.deletes.count + changeset.inserts.count == newCount else {
            throw fail(
                .countMismatch,
                "\(oldCount) - \(changeset.deletes.count) deleted + \(changeset.inserts.count) inserted != \(newCount)"
            )
        }
    }

    /// Checks staged changes from `old` to `new` as a view would apply them: every stage is a
    /// valid batch for the items the view shows before it, the view then shows exactly the
    /// stage's array (nothing stale), and the last stage shows `new`.
    ///
    /// Thread safety: pure. Callbacks: `==` of `Element`.
    /// - Throws: the first `BatchUpdateViolation` found.
    /// - Complexity: O(stages × (old.count + new.count)).
    public static func validate<Element: Equatable>(
        _ staged: StagedChangeset<Element>, from old: [Element], to new: [Element]
    ) throws(BatchUpdateViolation) {
        var shown = old
        for (index, stage) in staged.stages.enumerated() {
            try validate(stage.changeset, oldCount: shown.count, newCount: stage.array.count, stage: index)
            // The view keeps what it showed for survivors and reads inserted and reloaded items.
            let after: [Element]
            do {
                after = try stage.changeset.apply(to: shown, newElements: stage.array)
            } catch {
                throw BatchUpdateViolation(stage: index, rule: .countMismatch, detail: error.description)
            }
            guard after == stage.array else {
                let position = after.indices.first { after[$0] != stage.array[$0] } ?? after.count
                throw BatchUpdateViolation(
                    stage: index, rule: .staleContent, detail: "item \(position) shows an old value")
            }
            shown = after
        }
        guard shown == new else {
            throw BatchUpdateViolation(
                stage: staged.stages.count, rule: .wrongResult,
                detail: "the stages end at \(shown.count) items")
        }
    }
}
