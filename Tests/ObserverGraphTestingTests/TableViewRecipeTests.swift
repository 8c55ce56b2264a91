import Foundation
import ObserverGraph
import ObserverGraphTesting
import Testing

// The "Driving a table view" recipe of the article "Observable arrays and table updates",
// verbatim, against a stand-in for UITableView that checks every batch with the batch-update
// validator (UIKit itself does not exist on Linux).

enum RowAnimation { case automatic }

extension IndexPath {
    init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    var row: Int { self[1] }
}

/// Models `UITableView.performBatchUpdates`: collects the batch, then checks it against the
/// number of rows the data source reports before and after.
final class UITableView {
    /// What the data source reports (UIKit's table view holds its data source weakly: so does
    /// the closure each test sets here, or the pair would keep each other alive).
    var numberOfRows: () -> Int = { 0 }
    private(set) var batches: [ArrayChangeset] = []
    private(set) var violations: [BatchUpdateViolation] = []
    private var deletes: [Int] = []
    private var inserts: [Int] = []
    private var moves: [ArrayChangeset.Move] = []
    private var reloads: [Int] = []

    func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) {
        let before = numberOfRows()
        (deletes, inserts, moves, reloads) = ([], [], [], [])
        updates?()
        let batch = ArrayChangeset(deletes: deletes, inserts: inserts, updates: reloads, moves: moves)
        do {
            try BatchUpdateValidator.validate(
                batch, oldCount: before, newCount: numberOfRows(), stage: batches.count)
        } catch {
            violations.append(error)
        }
        batches.append(batch)
        completion?(true)
    }

    func deleteRows(at paths: [IndexPath], with animation: RowAnimation) { deletes += paths.map(\.row) }
    func insertRows(at paths: [IndexPath], with animation: RowAnimation) { inserts += paths.map(\.row) }
    func reloadRows(at paths: [IndexPath], with animation: RowAnimation) { reloads += paths.map(\.row) }
    func moveRow(at from: IndexPath, to: IndexPath) { moves.append(.init(from: from.row, to: to.row)) }
}

// MARK: - The article's code, verbatim

struct Row: Equatable, Sendable {
    let id: Int
    var title: String
}

final class RowsDataSource {
    let tableView: UITableView
    private(set) var rows: [Row] = []  // what numberOfRowsInSection and cellForRowAt read

    init(tableView: UITableView) { self.tableView = tableView }

    /// Shows `fresh`, animated: one stage at a time, the data first, then its batch.
    func show(_ fresh: [Row]) {
        let staged = StagedChangeset(from: rows, to: fresh, identifiedBy: \.id)
        for stage in staged.stages {
            let changes = stage.changeset
            tableView.performBatchUpdates {
                self.rows = stage.array
                self.tableView.deleteRows(at: changes.deletes.map(self.path), with: .automatic)
                self.tableView.insertRows(at: changes.inserts.map(self.path), with: .automatic)
                for move in changes.moves {
                    self.tableView.moveRow(at: self.path(move.from), to: self.path(move.to))
                }
                self.tableView.reloadRows(at: changes.updates.map(self.path), with: .automatic)
            }
        }
    }

    private func path(_ row: Int) -> IndexPath { IndexPath(row: row, section: 0) }
}

// MARK: -

/// A seeded generator (SplitMix64).
private struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Docs: driving a table view")
struct TableViewRecipeTests {
    @Test("The recipe drives the stand-in table view through valid batches to the new rows")
    func recipe() {
        let tableView = UITableView()
        let dataSource = RowsDataSource(tableView: tableView)
        tableView.numberOfRows = { [weak dataSource] in dataSource?.rows.count ?? 0 }
        dataSource.show([Row(id: 1, title: "Milk"), Row(id: 2, title: "Eggs"), Row(id: 3, title: "Tea")])
        // Tea moves to the top and is renamed; Milk goes; Bread comes: a move stage, then a reload.
        let fresh = [Row(id: 3, title: "Green tea"), Row(id: 2, title: "Eggs"), Row(id: 4, title: "Bread")]
        dataSource.show(fresh)
        #expect(dataSource.rows == fresh)
        #expect(tableView.violations.isEmpty, "\(tableView.violations)")
        #expect(
            tableView.batches == [
                ArrayChangeset(inserts: [0, 1, 2]),
                ArrayChangeset(deletes: [0], inserts: [2], moves: [.init(from: 2, to: 0)]),
                ArrayChangeset(updates: [0]),
            ])
    }

    @Test("The stand-in catches a batch that UIKit would refuse")
    func standInCatches() {
        let tableView = UITableView()
        var rows = [1, 2]
        tableView.numberOfRows = { rows.count }
        tableView.performBatchUpdates {
            rows = [2]
            tableView.deleteRows(at: [IndexPath(row: 0, section: 0)], with: .automatic)
            tableView.reloadRows(at: [IndexPath(row: 0, section: 0)], with: .automatic)
        }
        #expect(tableView.violations.map(\.rule) == [.oldIndexUsedTwice])
    }

    @Test("Random refreshes through the recipe: every batch valid, the rows always the target")
    func randomRefreshes() {
        var random = SeededRandom(seed: 21)
        let tableView = UITableView()
        let dataSource = RowsDataSource(tableView: tableView)
        tableView.numberOfRows = { [weak dataSource] in dataSource?.rows.count ?? 0 }
        for _ in 0..<300 {
            let fresh = (0..<12).shuffled(using: &random).prefix(Int.random(in: 0...10, using: &random)).map {
                Row(id: $0, title: Bool.random(using: &random) ? "a" : "b")
            }
            dataSource.show(fresh)
            #expect(dataSource.rows == fresh)
        }
        #expect(tableView.violations.isEmpty, "\(tableView.violations.prefix(3))")
    }
}
