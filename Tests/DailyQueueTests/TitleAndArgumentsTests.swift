import DailyQueue
import Foundation
import ObserverGraph
import Testing

@Suite("DailyQueue: title rules")
struct TitleRuleTests {
    @Test("Titles are trimmed; empty, over-long and control-character titles are refused")
    func rules() throws {
        #expect(try ItemTitle.validated("  Laundry \n") == "Laundry")
        #expect(throws: QueueError.emptyTitle) { try ItemTitle.validated(" \n\t ") }
        #expect(throws: QueueError.controlCharacterInTitle(found: "a line break")) {
            try ItemTitle.validated("two\nlines")
        }
        #expect(throws: QueueError.controlCharacterInTitle(found: "a tab")) {
            try ItemTitle.validated("a\tb")
        }
        #expect(throws: QueueError.controlCharacterInTitle(found: "an escape character")) {
            try ItemTitle.validated("\u{1B}[31mred")
        }
        #expect(throws: QueueError.controlCharacterInTitle(found: "U+202E")) {
            try ItemTitle.validated("abc\u{202E}def")
        }
        #expect(throws: QueueError.controlCharacterInTitle(found: "U+007F")) {
            try ItemTitle.validated("a\u{7F}")
        }
        // Characters are grapheme clusters: 200 flags (400 scalars) are 200 characters.
        let flags = String(repeating: "🇯🇵", count: 200)
        #expect(try ItemTitle.validated(flags) == flags)
        #expect(try ItemTitle.validated("👩\u{200D}💻 ok") == "👩\u{200D}💻 ok")
        #expect(throws: QueueError.titleTooLong(length: 201, maximum: 200)) {
            try ItemTitle.validated(String(repeating: "x", count: 201))
        }
        #expect(
            QueueError.titleTooLong(length: 201, maximum: 200).description
                == "a title can have at most 200 characters; this one has 201")
    }

    @Test("The manager applies the rules; a refused title changes nothing")
    func manager() throws {
        let store = InMemoryQueueStore()
        let manager = try QueueManager(store: store, startDay: .monday)
        #expect(throws: QueueError.self) { try manager.add(title: "a\nb") }
        #expect(throws: QueueError.self) { try manager.add(title: String(repeating: "y", count: 300)) }
        #expect(manager.items.isEmpty && store.saveCount == 0)
        #expect(try manager.add(title: "  ok  ").title == "ok")
    }
}

@Suite("DailyQueue: store consistency and transactions")
struct StoreTransactionTests {
    func item(_ id: Int, _ position: Int?) -> StoredItem {
        StoredItem(
            id: ItemID(id), title: "t\(id)", done: true, dayOfTheWeek: .monday, queuePosition: position)
    }

    @Test("Inconsistent content is named precisely")
    func inconsistency() {
        #expect(StoredQueue(currentDay: .monday).inconsistency == nil)
        #expect(
            StoredQueue(currentDay: .monday, nextID: 3, items: [item(1, 2), item(2, 1)]).inconsistency == nil)
        #expect(
            StoredQueue(currentDay: .monday, nextID: 3, items: [item(1, 1), item(1, nil)]).inconsistency
                == "the id #1 appears twice")
        #expect(
            StoredQueue(currentDay: .monday, nextID: 3, items: [item(1, 1), item(2, 1)]).inconsistency
                == "the queue positions are 1, 1, not 1...2")
        #expect(
            StoredQueue(currentDay: .monday, nextID: 3, items: [item(1, 0)]).inconsistency
                == "the queue positions are 0, not 1...1")
        #expect(
            StoredQueue(currentDay: .monday, nextID: 2, items: [item(2, nil)]).inconsistency
                == "nextID 2 is not above the largest id #2")
        #expect(
            StoredQueue(currentDay: .monday, nextID: 2, items: [item(0, nil)]).inconsistency
                == "id 0 is not positive")
    }

    @Test("A transaction's loads and saves reuse its lock; a save in a read transaction is refused")
    func nesting() throws {
        let url = try temporaryFolder().appendingPathComponent("queue.json")
        let store = JSONFileQueueStore(url: url, lockTimeout: 0.2)
        try store.transaction(.write) {
            let manager = try QueueManager(store: store, startDay: .monday)
            try manager.add(title: "inside")
            // Another thread is another lock holder: it waits, and gives up after its timeout.
            let failure = GraphLock<StoreError?>(nil)
            let finished = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                do {
                    _ = try JSONFileQueueStore(url: url, lockTimeout: 0.2).load()
                } catch {
                    failure.withLock { $0 = error as? StoreError }
                }
                finished.signal()
            }
            #expect(finished.wait(timeout: .now() + 30) == .success)
            #expect(failure.withLock { $0 } == .busy(path: url.path, waited: 0.2))
        }
        #expect(try store.load()?.items.map(\.title) == ["inside"])
        try store.transaction(.read) { () throws in
            #expect(try store.load()?.items.count == 1)
            #expect(throws: StoreError.unwritable(path: url.path, reason: "a read transaction cannot save")) {
                try store.save(StoredQueue(currentDay: .friday))
            }
        }
        #expect(try store.load()?.currentDay == .monday)
    }

    @Test("A directory is refused by the library too, with its own error")
    func directory() throws {
        let folder = try temporaryFolder()
        let store = JSONFileQueueStore(url: folder)
        #expect(throws: StoreError.isDirectory(path: folder.path)) { try store.load() }
        #expect(throws: StoreError.isDirectory(path: folder.path)) {
            try store.save(StoredQueue(currentDay: .monday))
        }
    }
}

@Suite("daily-queue: arguments a person types")
struct ArgumentTests {
    let store: String

    init() throws {
        store = try temporaryFolder().appendingPathComponent("queue.json").path
        _ = try DailyQueueCommand.run(["today", "Monday", "--store", store])
    }

    @Test("`--` ends the options: `add -- --done` adds the title \"--done\"")
    func doubleDash() throws {
        let result = try DailyQueueCommand.run(["add", "--store", store, "--", "--done"])
        #expect(result.out == "stored #1 \"--done\" (not queued: not done)\n")
        let dashed = try DailyQueueCommand.run(["add", "--done", "--store", store, "--", "-x --y"])
        #expect(dashed.out == "added #2 \"-x --y\" at position 1\n")
    }

    @Test("Bad titles: a clear error, exit 1, nothing stored")
    func badTitles() throws {
        let before = try? Data(contentsOf: URL(fileURLWithPath: store))
        let cases: [(String, String)] = [
            (
                "a\nb",
                "a title cannot contain control characters (found a line break); give one line of plain text"
            ),
            (
                "\u{1B}[2J",
                "a title cannot contain control characters (found an escape character); give one line of plain text"
            ),
            (
                String(repeating: "z", count: 100_000),
                "a title can have at most 200 characters; this one has 100000"
            ),
            ("   ", "a title cannot be empty"),
        ]
        for (title, message) in cases {
            let result = try DailyQueueCommand.run(["add", "--store", store, "--", title])
            #expect(result.status == 1)
            #expect(result.err == "daily-queue: \(message)\n")
        }
        #expect((try? Data(contentsOf: URL(fileURLWithPath: store))) == before)
    }

    @Test("--version; --store alone lists the store (never the demo)")
    func versionAndBareStore() throws {
        let version = try DailyQueueCommand.run(["--version"])
        #expect(version.status == 0 && version.out.hasPrefix("daily-queue ") && version.out.hasSuffix("\n"))
        #expect(version.out.split(separator: "\n").count == 1)
        _ = try DailyQueueCommand.run(["add", "Laundry", "--done", "--store", store])
        let bare = try DailyQueueCommand.run(["--store", store])
        #expect(bare.status == 0)
        #expect(bare.out.hasPrefix("Monday's queue (1 item(s)):\n") && bare.out.contains("Laundry"))
        #expect(!bare.out.contains("demo"))
        #expect(try DailyQueueCommand.run(["--store", store, "--all"]).out.hasPrefix("All 1 stored item(s)"))
        #expect(try DailyQueueCommand.run(["demo", "--store", store]).status == 2)
    }

    @Test("graph works in the repl")
    func graphInRepl() throws {
        _ = try DailyQueueCommand.run(["add", "Laundry", "--done", "--store", store])
        let result = try DailyQueueCommand.run(["repl", "--store", store], input: "graph\ngraph --mermaid\n")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("digraph") && result.out.contains("#1 \\\"Laundry\\\""))
        #expect(result.out.contains("flowchart"))
    }

    @Test("--help documents the exit codes, for the tool and for every store command")
    func exitCodesInHelp() throws {
        for arguments in [["--help"], ["add", "--help"], ["list", "--help"], ["repl", "--help"]] {
            let help = try DailyQueueCommand.run(arguments)
            #expect(help.status == 0)
            for line in [
                "exit status:", "  2  usage: an unknown command or option, a missing or malformed argument",
                "  3  the store is busy: another process held its lock for the whole wait; nothing changed",
            ] {
                #expect(help.out.contains(line + "\n"), "\(arguments): \(line)")
            }
        }
        let repl = try DailyQueueCommand.run(["repl", "--help"])
        #expect(repl.out.contains("re-reads the store under its lock"))
    }
}
