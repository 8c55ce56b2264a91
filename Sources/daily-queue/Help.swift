import DailyQueue

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
                summary: "play four short scenarios on a fresh in-memory queue, as diagrams",
                details:
                    "Prints, for each scenario, a diagram recorded from the real observer callbacks (a legend comes first), then the final queue. Never touches a store."
            )
        ),
        (
            "add",
            CommandHelp(
                usage: "daily-queue add [--day DAY] [--done] [--] TITLE",
                summary: "store a new item (queued if it is done and due today)",
                details:
                    "DAY is a day name (Tuesday, tue) or 1-7 (Monday = 1); default: the queue's current day.\n--done marks the item done. With the default rule only done items of the current day are queued.\nTITLE is one argument (quote it). Surrounding spaces are trimmed; at most \(ItemTitle.maximumLength) characters;\nno control characters (line breaks, tabs, escapes). `--` ends the options, so\n`add -- --done` adds the title \"--done\"."
            )
        ),
        (
            "list",
            CommandHelp(
                usage: "daily-queue list [--all]",
                summary: "show today's queue (--all: every stored item)",
                details:
                    "Columns: queue position, id, title, day, done. Titles too long for the terminal (COLUMNS, default 80) are cut with \"…\".\n`daily-queue --store PATH` with no command lists too."
            )
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
                    "Each line is a command as above, without `daily-queue` (quote titles with spaces). `help` lists them, `quit` ends. Works with a pipe.\nBefore each command the repl re-reads the store under its lock, so other repls and commands running at the same time are seen, and never overwritten."
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
        let footer = command == "demo" ? "" : "\n\n\(storeNote)\n\n\(exitCodes)"
        return "usage: \(help.usage)\n\n\(help.summary).\n\(help.details)\(footer)"
    }

    /// What `help` shows inside the repl: only the commands that work there.
    static var replOverview: String {
        let inRepl = commands.filter { !["demo", "repl"].contains($0.0) }
        let width = max(inRepl.map(\.0.count).max() ?? 0, "help [COMMAND]".count)
        let lines = inRepl.map {
            "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1.summary)"
        }
        return """
            repl commands (as on the command line, without `daily-queue` and `--store`):
            \(lines.joined(separator: "\n"))
              help [COMMAND]  this list, or one command's help
              quit            end (so does the end of the input)
            Each command first re-reads the store under its lock, so changes made meanwhile by other
            repls or commands are shown and kept, never overwritten.
            The repl exits with status 1 if any line failed, or at a line longer than 64 KiB.
            """
    }

    static let storeNote = """
        Every command except demo takes --store PATH (default: ~/.daily-queue.json), before or after
        its arguments. Any number of processes may run commands on one store at once; none loses a
        write: each command locks PATH.lock (beside the store) for its read, change and save, waiting
        up to 5 s (DAILY_QUEUE_LOCK_TIMEOUT=SECONDS, decimal, at most 1000000, changes that) for
        another process to finish.
        """

    static let exitCodes = """
        exit status:
          0  done
          1  the command was refused (no such item, a bad title or position); nothing changed
          2  usage: an unknown command or option, a missing or malformed argument
          3  the store is busy: another process held its lock for the whole wait; nothing changed
          4  the store is invalid (corrupt, inconsistent, a newer format, a directory, not a
             regular file); it was left untouched
          5  input/output: the store or its folder cannot be read, or may not be written by this
             user, or the disk is full; the store keeps its previous content (unless the
             message says the new content is in place and only the flush of its folder failed)
          6  output: the command took effect, but what it printed could not be written (a
             closed pipe, a full disk)
        """

    static var overview: String {
        let width = commands.map(\.0.count).max() ?? 0
        let lines = commands.map {
            "  \($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1.summary)"
        }
        return """
            daily-queue \(Tool.version): the daily queue manager of ObserverGraph's reference app.

            usage: daily-queue [COMMAND] [ARGUMENTS] [--store PATH]
                   daily-queue --store PATH     (lists the queue)
                   daily-queue --version

            commands:
            \(lines.joined(separator: "\n"))

            `daily-queue COMMAND --help` explains one command.

            \(storeNote)

            \(exitCodes)
            """
    }
}
