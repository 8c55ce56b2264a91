import Foundation
import Testing

@Suite("daily-queue: the command line, end to end")
struct CommandLineTests {
    let store: String

    init() throws {
        store = try temporaryFolder().appendingPathComponent("queue.json").path
    }

    func run(_ arguments: String..., input: String? = nil) throws -> DailyQueueCommand.Result {
        try DailyQueueCommand.run(arguments, input: input)
    }

    @Test("A scripted session: every command prints what the observers reported")
    func scriptedSession() throws {
        // A new store starts on the real weekday; pin it (the message depends on the real day).
        var result = try run("--store", store, "today", "Tuesday")
        #expect(result.status == 0 && result.err.isEmpty)
        result = try run("add", "Laundry", "--done", "--store", store)
        #expect(result.out == "added #1 \"Laundry\" at position 1\n")
        result = try run("add", "Dishes", "--store", store, "--done")
        #expect(result.out == "added #2 \"Dishes\" at position 2\n")
        result = try run("add", "Taxes", "--day", "fri", "--store", store)
        #expect(result.out == "stored #3 \"Taxes\" (not queued: not done)\n")
        result = try run("move", "2", "1", "--store", store)
        #expect(result.out == "moved #2 \"Dishes\" from position 2 to 1\n")
        result = try run("undone", "#1", "--store", store)
        #expect(result.out == "removed #1 \"Laundry\" from position 2 (done became false)\n")
        result = try run("done", "1", "--store", store)
        #expect(result.out == "queued #1 \"Laundry\" at position 2 (done became true)\n")
        result = try run("set-day", "2", "Wednesday", "--store", store)
        #expect(result.out == "removed #2 \"Dishes\" from position 1 (day became Wednesday)\n")
        result = try run("list", "--store", store)
        #expect(
            result.out == """
                Tuesday's queue (1 item(s)):
                  pos  id  title    day      done
                  1    #1  Laundry  Tuesday  yes

                """)
        result = try run("today", "wed", "--store", store)
        #expect(
            result.out == """
                today is Wednesday (was Tuesday)
                removed #1 "Laundry" from position 1 (not due Wednesday)
                queued #2 "Dishes" at position 1 (due Wednesday)

                """)
        result = try run("remove", "3", "--store", store)
        #expect(result.out == "deleted #3 \"Taxes\"\n")
        result = try run("list", "--all", "--store", store)
        #expect(
            result.out == """
                All 2 stored item(s); today is Wednesday:
                  pos  id  title    day        done
                  -    #1  Laundry  Tuesday    yes
                  1    #2  Dishes   Wednesday  yes

                """)
        #expect(result.status == 0 && result.err.isEmpty)
    }

    @Test("Bad input: a one-line error on stderr, a non-zero exit, and the stored data unchanged")
    func badInput() throws {
        _ = try run("today", "Tuesday", "--store", store)
        _ = try run("add", "Laundry", "--done", "--store", store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let cases: [([String], Int32, String)] = [
            (
                ["frobnicate", "--store", store], 2,
                "daily-queue: unknown command frobnicate (see daily-queue --help)\n"
            ),
            (["done", "9", "--store", store], 1, "daily-queue: no item #9\n"),
            (
                ["set-day", "1", "Funday", "--store", store], 2,
                "daily-queue: Funday is not a day (use Monday…Sunday, mon…sun, or 1…7) (see daily-queue set-day --help)\n"
            ),
            (["move", "1", "5", "--store", store], 1, "daily-queue: position 5 is not in 1...1\n"),
            (
                ["move", "1", "x", "--store", store], 2,
                "daily-queue: POSITION must be a number, not x (see daily-queue move --help)\n"
            ),
            (
                ["done", "--store", store], 2,
                "daily-queue: done takes <ID>, got 0 argument(s) (see daily-queue done --help)\n"
            ),
            (
                ["add", "X", "--frequently", "--store", store], 2,
                "daily-queue: add does not take --frequently (see daily-queue add --help)\n"
            ),
        ]
        for (arguments, status, message) in cases {
            let result = try DailyQueueCommand.run(arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.err == message, "\(arguments)")
            #expect(result.out.isEmpty, "\(arguments)")
        }
        let missingValue = try DailyQueueCommand.run(["add", "X", "--day", "--store", store])
        #expect(missingValue.status == 2)
        #expect(missingValue.err == "daily-queue: --day needs a value (see daily-queue add --help)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)

        let blocked = try temporaryFolder().appendingPathComponent("file")
        try Data().write(to: blocked)
        let unwritable = try run("add", "X", "--store", blocked.appendingPathComponent("queue.json").path)
        #expect(
            unwritable.status == 5 && unwritable.err.hasPrefix("daily-queue: the folder \(blocked.path) "))
        #expect(unwritable.err.split(separator: "\n").count == 1)

        let corrupt = try temporaryFolder().appendingPathComponent("queue.json")
        try Data("not json".utf8).write(to: corrupt)
        let onCorrupt = try run("add", "X", "--store", corrupt.path)
        #expect(onCorrupt.status == 4)
        #expect(
            onCorrupt.err
                == "daily-queue: the store \(corrupt.path) is corrupt (not a daily-queue file); it was left untouched\n"
        )
        #expect(try Data(contentsOf: corrupt) == Data("not json".utf8))
    }

    @Test("The repl's help lists what works in the repl; an empty queue points to list --all")
    func replHelpAndEmptyQueue() throws {
        _ = try run("today", "Monday", "--store", store)
        let result = try run("repl", "--store", store, input: "help\nlist\n")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "repl commands (as on the command line, without `daily-queue` and `--store`):")
        #expect(!lines.contains { $0.hasPrefix("  demo") || $0.hasPrefix("  repl") })
        #expect(lines.contains { $0.hasPrefix("  graph") })
        #expect(
            lines.contains(
                "Each command first re-reads the store under its lock, so changes made meanwhile by other"))
        #expect(lines.contains("  quit            end (so does the end of the input)"))
        #expect(
            lines.suffix(2) == [
                "Monday's queue (0 item(s)):", "  (none; `list --all` shows every stored item)",
            ])
        #expect(result.status == 0)
    }

    @Test("--help works for the tool and for every command")
    func help() throws {
        let overview = try run("--help")
        #expect(overview.status == 0 && overview.out.contains("usage: daily-queue [COMMAND]"))
        for command in [
            "demo", "add", "list", "done", "undone", "set-day", "move", "remove", "today", "repl", "graph",
        ] {
            let result = try run(command, "--help")
            #expect(result.status == 0, "\(command)")
            #expect(result.out.hasPrefix("usage: daily-queue"), "\(command)")
        }
        #expect(try run("help", "move").out.hasPrefix("usage: daily-queue move ID POSITION"))
    }

    @Test("The repl reads a pipe and prints notifications as they fire")
    func repl() throws {
        _ = try run("today", "Monday", "--store", store)
        let script = """
            add "Buy milk" --done
            add Laundry --done
            list
            undone 1
            bogus
            move 2 1
            quit
            add "never run" --done
            """
        let result = try run("repl", "--store", store, input: script)
        #expect(
            result.out == """
                added #1 "Buy milk" at position 1
                added #2 "Laundry" at position 2
                Monday's queue (2 item(s)):
                  pos  id  title     day     done
                  1    #1  Buy milk  Monday  yes
                  2    #2  Laundry   Monday  yes
                removed #1 "Buy milk" from position 1 (done became false)
                #2 "Laundry" is already at position 1

                """)
        #expect(result.err == "daily-queue: unknown command bogus in the repl (type help)\n")
        #expect(result.status == 1)
        #expect(try run("list", "--store", store).out.contains("Laundry"))
    }
}
