import DailyQueue
import Foundation
import ObserverGraph

/// Prints what the queue manager reports, as it happens.
final class EventPrinter: GraphObserver, QueueManagerObserver {
    let graphDisplayName = "printer (daily-queue)"
    private let write: (String) -> Void
    init(_ write: @escaping (String) -> Void) { self.write = write }
    func queueManager(_ manager: QueueManager, didReport event: QueueEvent) { write(event.description) }
}

/// One command of the tool: its usage line, a summary, and more help.
struct CommandHelp {
    let usage: String
    let summary: String
    let details: String
}

enum Help {
    static let commands: [(String, CommandHelp)] = [
        (
            "demo",
            CommandHelp(
                usage: "daily-queue [demo]",
                summary: "play the source document's scenarios on a fresh in-memory queue",
                details:
                    "Prints, for each scenario, the marble diagram recorded from the real observer callbacks, then the final queue."
            )
        ),
        (
            "add",
            CommandHelp(
                usage: "daily-queue add TITLE [--day DAY] [--done]",
                summary: "store a new item (queued if it is done and due today)",
                details:
                    "DAY is a day name (Tuesday, tue) or 1-7 (Monday = 1); default: the queue's current day.\n--done marks the item done. With the default rule only done items of the current day are queued."
            )
        ),
        (
            "list",
            CommandHelp(
                usage: "daily-queue list [--all]",
                summary: "show today's queue (--all: every stored item)",
                details: "Columns: queue position, id, title, day, done.")
        ),
        (
            "done",
            CommandHelp(
                usage: "daily-queue done ID", summary: "mark an item done",
                details: "ID is the number shown by list (with or without #).")
        ),
        (
            "undone",
            CommandHelp(
                usage: "daily-queue undone ID", summary: "mark an item not done (it leaves the queue)",
                details: "ID is the number shown by list.")
        ),
        (
            "set-day",
            CommandHelp(
                usage: "daily-queue set-day ID DAY", summary: "change an item's day of the week",
                details: "An item whose day is no longer the current day leaves the queue; it stays stored.")
        ),
        (
            "move",
            CommandHelp(
                usage: "daily-queue move ID POSITION", summary: "move a queued item to POSITION (1 is first)",
                details: "The other items shift; positions are saved.")
        ),
        (
            "remove",
            CommandHelp(
                usage: "daily-queue remove ID", summary: "delete an item for good",
                details: "The items after it move up one position.")
        ),
        (
            "today",
            CommandHelp(
                usage: "daily-queue today [DAY]", summary: "show, or change, the queue's current day",
                details:
                    "The current day is saved in the store and changes only with this command (it does not follow the calendar), so a queue can be prepared for another day.\nChanging the day re-checks every item in one change: items not due leave, items due join."
            )
        ),
        (
            "repl",
            CommandHelp(
                usage: "daily-queue repl",
                summary: "read commands from standard input, printing notifications live",
                details:
                    "Each line is a command as above, without `daily-queue` (quote titles with spaces). `help` lists them, `quit` ends. Works with a pipe."
            )
        ),
        (
            "graph",
            CommandHelp(
                usage: "daily-queue graph [--mermaid]",
                summary: "print the live observer graph of the queue as DOT (or Mermaid)",
                details:
                    "Nodes are the manager, its items and its printing observer; edges are subscriptions.")
        ),
    ]

    static func text(for command: String?) -> String? {
        guard let command else { return overview }
        guard let help = commands.first(where: { $0.0 == command })?.1 else { return nil }
        return "usage: \(help.usage)\n\n\(help.summary).\n\(help.details)\n\(storeNote)"
    }

    /// What `help` shows inside the repl: only the commands that work there.
    static var replOverview: String {
        let inRepl = commands.filter { !["demo", "repl", "graph"].contains($0.0) }
        let width = inRepl.map(\.0.count).max() ?? 0
        let lines = inRepl.map {
            "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1.summary)"
        }
        return """
            repl commands (as on the command line, without `daily-queue` and `--store`):
            \(lines.joined(separator: "\n"))
              help [COMMAND]  this list, or one command's help
              quit            end (so does the end of the input)
            The repl exits with status 1 if any line failed.
            """
    }

    static let storeNote =
        "\nEvery command except demo takes --store PATH (default: ~/.daily-queue.json), before or after its arguments."

    static var overview: String {
        let width = commands.map(\.0.count).max() ?? 0
        let lines = commands.map {
            "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1.summary)"
        }
        return """
            daily-queue: the daily queue manager of ObserverGraph's reference app.

            usage: daily-queue [COMMAND] [ARGUMENTS] [--store PATH]

            commands:
            \(lines.joined(separator: "\n"))

            `daily-queue COMMAND --help` explains one command.\(storeNote)
            """
    }
}

/// The tool: parses a command line and runs it against a store, writing to `out` and `err`.
struct Tool {
    var out: (String) -> Void
    var err: (String) -> Void
    var readLine: () -> String? = { Swift.readLine() }
    var interactive = false

    /// Runs `raw` (the arguments without the program name); returns the exit code.
    func run(_ raw: [String]) -> Int32 {
        do {
            var arguments = try Arguments(raw)
            let command = arguments.popCommand()
            if arguments.flags.contains("--help") || command == "help" {
                let topic = command == "help" ? arguments.popCommand() : command
                guard let text = Help.text(for: topic) else {
                    throw UsageError("unknown command \(topic ?? "")")
                }
                out(text)
                return 0
            }
            switch command {
            case nil, "demo":
                try arguments.expect(command: "demo")
                try arguments.allow([], command: "demo")
                Demo(out: out).run()
                return 0
            case "repl":
                try arguments.expect(command: "repl")
                try arguments.allow([], command: "repl")
                return try repl(storeURL(arguments))
            case "graph":
                try arguments.expect(command: "graph")
                try arguments.allow(["--mermaid"], command: "graph")
                let manager = try open(storeURL(arguments))
                let printer = EventPrinter(out)
                manager.addObserver(printer)
                out(GraphExport.render(manager: manager, mermaid: arguments.flags.contains("--mermaid")))
                return 0
            case let command?:
                guard Help.commands.contains(where: { $0.0 == command }) else {
                    throw UsageError("unknown command \(command)")
                }
                let manager = try open(storeURL(arguments))
                let printer = EventPrinter(out)
                manager.addObserver(printer)
                try perform(command, arguments, on: manager)
                return 0
            }
        } catch let error as UsageError {
            let known = raw.first.flatMap { first in Help.commands.first { $0.0 == first }?.0 }
            err("daily-queue: \(error) (see daily-queue \(known.map { "\($0) " } ?? "")--help)")
            return 2
        } catch {
            err("daily-queue: \(error)")
            return 1
        }
    }

    /// Runs one queue command; the printer subscribed to `manager` reports what happened.
    func perform(_ command: String, _ arguments: Arguments, on manager: QueueManager) throws {
        switch command {
        case "add":
            try arguments.expect("TITLE", command: command)
            try arguments.allow(["--day", "--done"], command: command)
            let day = try arguments.values["--day"].map(parseDay)
            try manager.add(title: arguments.words[0], day: day, done: arguments.flags.contains("--done"))
        case "list":
            try arguments.expect(command: command)
            try arguments.allow(["--all"], command: command)
            out(Table.render(manager, all: arguments.flags.contains("--all")))
        case "done", "undone":
            try arguments.expect("ID", command: command)
            try arguments.allow([], command: command)
            let id = try parseID(arguments.words[0])
            guard let item = manager.item(id) else { throw QueueError.unknownItem(id) }
            let target = command == "done"
            guard item.done.value != target else {
                out("\(item.snapshot) is already \(target ? "done" : "not done")")
                return
            }
            try manager.setDone(id, target)
        case "set-day":
            try arguments.expect("ID", "DAY", command: command)
            try arguments.allow([], command: command)
            let (id, day) = (try parseID(arguments.words[0]), try parseDay(arguments.words[1]))
            guard let item = manager.item(id) else { throw QueueError.unknownItem(id) }
            guard item.dayOfTheWeek.value != day else {
                out("\(item.snapshot) is already for \(day)")
                return
            }
            try manager.setDay(id, day)
        case "move":
            try arguments.expect("ID", "POSITION", command: command)
            try arguments.allow([], command: command)
            let id = try parseID(arguments.words[0])
            guard let position = Int(arguments.words[1]) else {
                throw UsageError("POSITION must be a number, not \(arguments.words[1])")
            }
            let before = manager.item(id)?.queuePosition
            try manager.move(id, to: position)
            if before == position, let item = manager.item(id) {
                out("\(item.snapshot) is already at position \(position)")
            }
        case "remove":
            try arguments.expect("ID", command: command)
            try arguments.allow([], command: command)
            try manager.delete(try parseID(arguments.words[0]))
        case "today":
            try arguments.allow([], command: command)
            guard arguments.words.count <= 1 else { throw UsageError("today takes at most one DAY") }
            if let text = arguments.words.first {
                let day = try parseDay(text)
                guard day != manager.currentDay else {
                    out("today is already \(day)")
                    return
                }
                try manager.setCurrentDay(day)
            } else {
                out("today is \(manager.currentDay)")
            }
        default:
            throw UsageError("unknown command \(command)")
        }
    }

    /// Reads commands line by line, printing notifications as the observers receive them.
    func repl(_ url: URL) throws -> Int32 {
        let manager = try open(url)
        let printer = EventPrinter(out)
        manager.addObserver(printer)
        var failures = 0
        if interactive { out("daily-queue repl on \(url.path): type `help`, or `quit` to end.") }
        while true {
            if interactive { out("> ") }
            guard let line = readLine() else { break }
            let words: [String]
            do {
                words = try Self.split(line)
            } catch {
                err("daily-queue: \(error)")
                failures += 1
                continue
            }
            guard let command = words.first else { continue }
            if command == "quit" || command == "exit" { break }
            do {
                var arguments = try Arguments(words)
                _ = arguments.popCommand()
                if command == "help" || arguments.flags.contains("--help") {
                    let topic = command == "help" ? arguments.words.first : command
                    out(
                        topic == nil
                            ? Help.replOverview : Help.text(for: topic) ?? "unknown command \(topic!)")
                    continue
                }
                guard Help.commands.contains(where: { $0.0 == command }),
                    !["demo", "repl", "graph"].contains(command)
                else {
                    throw UsageError("unknown command \(command) in the repl (type help)")
                }
                guard arguments.values["--store"] == nil else {
                    throw UsageError("--store cannot change inside the repl")
                }
                try perform(command, arguments, on: manager)
            } catch {
                err("daily-queue: \(error)")
                failures += 1
            }
        }
        return failures == 0 ? 0 : 1
    }

    private func storeURL(_ arguments: Arguments) -> URL {
        if let path = arguments.values["--store"] { return URL(fileURLWithPath: path) }
        let home =
            ProcessInfo.processInfo.environment["HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".daily-queue.json")
    }

    private func open(_ url: URL) throws -> QueueManager {
        try QueueManager(store: JSONFileQueueStore(url: url), startDay: Self.today())
    }

    /// The weekday of the system's current date.
    static func today() -> Weekday {
        let weekday = Calendar(identifier: .gregorian).component(.weekday, from: Date())  // 1 = Sunday
        return Weekday(rawValue: weekday == 1 ? 7 : weekday - 1) ?? .monday
    }

    private func parseID(_ text: String) throws(UsageError) -> ItemID {
        let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard let number = Int(digits), number > 0 else {
            throw UsageError("ID must be an item number like 3 or #3, not \(text)")
        }
        return ItemID(number)
    }

    private func parseDay(_ text: String) throws(UsageError) -> Weekday {
        guard let day = Weekday(parsing: text) else {
            throw UsageError("\(text) is not a day (use Monday…Sunday, mon…sun, or 1…7)")
        }
        return day
    }

    /// Splits a repl line into words; double or single quotes group words.
    static func split(_ line: String) throws(UsageError) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw UsageError("unclosed quote in: \(line)") }
        if inWord { words.append(current) }
        return words
    }
}

/// The queue as a text table.
enum Table {
    static func render(_ manager: QueueManager, all: Bool) -> String {
        let items = all ? manager.items : manager.queue.array
        let title =
            all
            ? "All \(items.count) stored item(s); today is \(manager.currentDay):"
            : "\(manager.currentDay)'s queue (\(items.count) item(s)):"
        guard !items.isEmpty else {
            return title + (all ? "\n  (none)" : "\n  (none; `list --all` shows every stored item)")
        }
        let rows =
            [["pos", "id", "title", "day", "done"]]
            + items.map { item in
                [
                    item.queuePosition.map(String.init) ?? "-", item.id.description, item.title,
                    item.dayOfTheWeek.value.name, item.done.value ? "yes" : "no",
                ]
            }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            "  "
                + row.enumerated().map {
                    $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0)
                }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([title] + lines).joined(separator: "\n")
    }
}
