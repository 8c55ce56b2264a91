import DailyQueue
import Foundation

/// The queue as a text table whose columns line up on a terminal: cells are measured in
/// display columns (`DisplayWidth`), and titles are cut with "…" so a row fits `width`.
enum Table {
    /// The terminal's width: `COLUMNS` when it is a sensible number, else 80.
    static var terminalWidth: Int {
        guard let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text),
            (20...10_000).contains(columns)
        else { return 80 }
        return columns
    }

    /// The narrowest a title column gets, however narrow the terminal.
    static let minimumTitleWidth = 10

    static func render(_ manager: QueueManager, all: Bool, width: Int = terminalWidth) -> String {
        let items = all ? manager.items : manager.queue.array
        let title =
            all
            ? "All \(items.count) stored item(s); today is \(manager.currentDay):"
            : "\(manager.currentDay)'s queue (\(items.count) item(s)):"
        guard !items.isEmpty else {
            return title + (all ? "\n  (none)" : "\n  (none; `list --all` shows every stored item)")
        }
        var rows =
            [["pos", "id", "title", "day", "done"]]
            + items.map { item in
                [
                    item.queuePosition.map(String.init) ?? "-", item.id.description, item.title,
                    item.dayOfTheWeek.value.name, item.done.value ? "yes" : "no",
                ]
            }
        var widths = (0..<5).map { column in rows.map { DisplayWidth.columns($0[column]) }.max() ?? 0 }
        // Indent 2, four gaps of 2: the title gets what the other columns leave.
        let others = widths[0] + widths[1] + widths[3] + widths[4] + 2 + 4 * 2
        widths[2] = min(widths[2], max(minimumTitleWidth, width - others))
        for index in rows.indices {
            rows[index][2] = DisplayWidth.truncated(rows[index][2], toWidth: widths[2])
        }
        let lines = rows.map { row in
            var line = "  "
            for (column, cell) in row.enumerated() {
                line +=
                    column == row.count - 1 ? cell : DisplayWidth.padded(cell, toWidth: widths[column]) + "  "
            }
            return line
        }
        return ([title] + lines).joined(separator: "\n")
    }
}
