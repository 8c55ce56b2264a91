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

/// The tool: parses a command line and runs it against a store, writing to `out` and `err`.
struct Tool {
    var out: (String) -> Void
    var err: (String) -> Void
    var interactive = false

    /// The tool's version, printed by `--version`.
    static let version = "0.1.0+unreleased"

    /// Runs `raw` (the arguments without the program name); returns the exit code.
    func run(_ raw: [String]) -> Int32 {
        do {
            var arguments = try Arguments(raw)
            if arguments.flags.contains("--version") {
                try arguments.expect(command: "--version")
                out("daily-queue \(Self.version)")
                return ExitCode.success
            }
            var command = arguments.popCommand()
            if arguments.flags.contains("--help") || command == "help" {
                let topic = command == "help" ? arguments.popCommand() : command
                guard let text = Help.text(for: topic) else {
                    throw UsageError("unknown command \(topic ?? "")")
                }
                out(text)
                return ExitCode.success
            }
            // `daily-queue --store PATH` shows that store; only a bare `daily-queue` plays the demo.
            if command == nil && arguments.values["--store"] != nil { command = "list" }
            switch command {
            case nil, "demo":
                try arguments.expect(command: "demo")
                try arguments.allow([], command: "demo")
                guard arguments.values["--store"] == nil else {
                    throw UsageError("demo does not take --store")
                }
                Demo(out: out).run()
                return ExitCode.success
            case "repl":
                try arguments.expect(command: "repl")
                try arguments.allow([], command: "repl")
                return try repl(store(arguments))
            case let command?:
                guard Help.commands.contains(where: { $0.0 == command }) else {
                    throw UsageError("unknown command \(command)")
                }
                try execute(command, arguments, in: store(arguments))
                return ExitCode.success
            }
        } catch let error as UsageError {
            let known = raw.first.flatMap { first in Help.commands.first { $0.0 == first }?.0 }
            err("daily-queue: \(error) (see daily-queue \(known.map { "\($0) " } ?? "")--help)")
            return ExitCode.usage
        } catch {
            err("daily-queue: \(error)")
            return ExitCode.of(error)
        }
    }

    /// Runs one command as a transaction on the store: under its lock (shared to read,
    /// exclusive to write), a fresh manager loads the store, the command changes it, and every
    /// save happens before the lock is released.
    ///
    /// The manager is released after the lock: releasing the items of a large store takes a
    /// while (about a third of a `list` of 20,000 items), and other processes need not wait for
    /// it. (It is released, not left to the process's exit: the address sanitizer's leak check,
    /// which the tests run on this program, would report what only weak references reach.)
    func execute(_ command: String, _ arguments: Arguments, in store: JSONFileQueueStore) throws {
        let action = try plan(command, arguments)
        let manager = try store.transaction(Self.access(command, arguments)) { () throws -> QueueManager in
            let manager = try QueueManager(store: store, startDay: Self.today())
            let printer = EventPrinter(out)
            manager.addObserver(printer)
            try withExtendedLifetime(printer) { try action(manager) }
            return manager
        }
        withExtendedLifetime(manager) {}  // released here, after the lock
    }

    /// Whether `command` only reads the store (`list`, `graph`, `today` without a day).
    static func access(_ command: String, _ arguments: Arguments) -> StoreAccess {
        switch command {
        case "list", "graph": .read
        case "today" where arguments.words.isEmpty: .read
        default: .write
        }
    }

    /// Checks a queue command's arguments and returns what it does to a loaded manager; the
    /// printer subscribed to the manager reports what happened. Usage errors come out here,
    /// before the store is touched.
    func plan(_ command: String, _ arguments: Arguments) throws(UsageError) -> (QueueManager) throws -> Void {
        switch command {
        case "add":
            try arguments.expect("TITLE", command: command)
            try arguments.allow(["--day", "--done"], command: command)
            let day = try arguments.values["--day"].map(parseDay)
            let (title, done) = (arguments.words[0], arguments.flags.contains("--done"))
            return { manager in try manager.add(title: title, day: day, done: done) }
        case "list":
            try arguments.expect(command: command)
            try arguments.allow(["--all"], command: command)
            let all = arguments.flags.contains("--all")
            return { manager in out(Table.render(manager, all: all)) }
        case "graph":
            try arguments.expect(command: command)
            try arguments.allow(["--mermaid"], command: command)
            let mermaid = arguments.flags.contains("--mermaid")
            return { manager in out(GraphExport.render(manager: manager, mermaid: mermaid)) }
        case "done", "undone":
            try arguments.expect("ID", command: command)
            try arguments.allow([], command: command)
            let id = try parseID(arguments.words[0])
            let target = command == "done"
            return { manager in
                guard let item = manager.item(id) else { throw QueueError.unknownItem(id) }
                guard item.done.value != target else {
                    out("\(item.snapshot) is already \(target ? "done" : "not done")")
                    return
                }
                try manager.setDone(id, target)
            }
        case "set-day":
            try arguments.expect("ID", "DAY", command: command)
            try arguments.allow([], command: command)
            let (id, day) = (try parseID(arguments.words[0]), try parseDay(arguments.words[1]))
            return { manager in
                guard let item = manager.item(id) else { throw QueueError.unknownItem(id) }
                guard item.dayOfTheWeek.value != day else {
                    out("\(item.snapshot) is already for \(day)")
                    return
                }
                try manager.setDay(id, day)
            }
        case "move":
            try arguments.expect("ID", "POSITION", command: command)
            try arguments.allow([], command: command)
            let id = try parseID(arguments.words[0])
            guard let position = Int(arguments.words[1]) else {
                throw UsageError("POSITION must be a number, not \(arguments.words[1])")
            }
            return { manager in
                let before = manager.item(id)?.queuePosition
                try manager.move(id, to: position)
                if before == position, let item = manager.item(id) {
                    out("\(item.snapshot) is already at position \(position)")
                }
            }
        case "remove":
            try arguments.expect("ID", command: command)
            try arguments.allow([], command: command)
            let id = try parseID(arguments.words[0])
            return { manager in try manager.delete(id) }
        case "today":
            try arguments.allow([], command: command)
            guard arguments.words.count <= 1 else { throw UsageError("today takes at most one DAY") }
            guard let text = arguments.words.first else {
                return { manager in out("today is \(manager.currentDay)") }
            }
            let day = try parseDay(text)
            return { manager in
                guard day != manager.currentDay else {
                    out("today is already \(day)")
                    return
                }
                try manager.setCurrentDay(day)
            }
        default:
            throw UsageError("unknown command \(command)")
        }
    }

    /// The store named by `--store` (default `~/.daily-queue.json`), waiting for its lock up
    /// to `DAILY_QUEUE_LOCK_TIMEOUT` seconds (default 5). A `--store` path of `~` or starting
    /// with `~/` is in the `HOME` folder (as a shell expands it), and so is the default store: a
    /// `HOME` that is empty or relative is refused rather than read as the current folder.
    func store(_ arguments: Arguments) throws(UsageError) -> JSONFileQueueStore {
        let path: String
        if let given = arguments.values["--store"] {
            guard !given.isEmpty else { throw UsageError("--store needs a path") }
            if given == "~" || given.hasPrefix("~/") {
                let expanded = try Self.home() + given.dropFirst()
                path = expanded.isEmpty ? "/" : expanded  // `~` with HOME=/
            } else {
                path = given
            }
        } else {
            path = try Self.home() + "/.daily-queue.json"
        }
        var timeout = 5.0
        if let text = ProcessInfo.processInfo.environment["DAILY_QUEUE_LOCK_TIMEOUT"] {
            guard let seconds = Self.decimalSeconds(text) else {
                throw UsageError(
                    "DAILY_QUEUE_LOCK_TIMEOUT must be a decimal number of seconds up to 1000000 (such as 5 or "
                        + "0.5), not \(text)")
            }
            timeout = seconds
        }
        // Any other path is taken as given (a shell has expanded `~user/…` already, if asked).
        return JSONFileQueueStore(url: URL(fileURLWithPath: path), lockTimeout: timeout)
    }

    /// The `HOME` folder, without a trailing slash; the user database's home when `HOME` is not
    /// set. Refuses an empty or relative `HOME`.
    static func home() throws(UsageError) -> String {
        guard let home = ProcessInfo.processInfo.environment["HOME"] else {
            return FileManager.default.homeDirectoryForCurrentUser.path
        }
        guard home.hasPrefix("/") else {
            throw UsageError(
                "HOME is \(home.isEmpty ? "empty" : "a relative path (\(home))"); set it to your home folder, "
                    + "or give --store PATH")
        }
        var trimmed = Substring(home)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed == "/" ? "" : String(trimmed)
    }

    /// `text` as a number of seconds when it is written with decimal digits and at most one
    /// point (`5`, `0.5`, `.5`), at most a million seconds; `nil` otherwise. `Double(_:)` alone
    /// would also read `0x10` (16), `1e3`, `inf` and `nan`.
    static func decimalSeconds(_ text: String) -> Double? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: ".") }
        guard !digits.isEmpty, text.utf8.count - digits.count <= 1,
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let seconds = Double(text), seconds <= 1_000_000
        else { return nil }
        return seconds
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
}
