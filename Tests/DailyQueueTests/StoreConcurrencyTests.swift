import DailyQueue
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's promise, checked with real processes: any number of processes may run commands
/// at once, and none loses a write.
@Suite("daily-queue: many processes on one store")
struct StoreConcurrencyTests {
    let store: String

    init() throws {
        store = try temporaryFolder().appendingPathComponent("queue.json").path
    }

    /// The stored queue, read with the library (which checks its consistency).
    func stored() throws -> StoredQueue {
        try #require(try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load())
    }

    @Test("50 concurrent `add` processes: exactly 50 items, 50 distinct ids, positions 1...50")
    func fiftyConcurrentAdds() throws {
        _ = try DailyQueueCommand.run(["today", "Monday", "--store", store])
        // Generous lock wait: 50 processes on a loaded machine (or under a sanitizer) queue up.
        let environment = ["DAILY_QUEUE_LOCK_TIMEOUT": "60"]
        let processes = try (1...50).map {
            try Spawned(["add", "item \($0)", "--done", "--store", store], environment: environment)
        }
        for process in processes { try? process.stdin.fileHandleForWriting.close() }
        let deadline = Date().addingTimeInterval(90)  // one deadline for all of them
        let results = processes.map { $0.finish(timeout: max(1, deadline.timeIntervalSinceNow)) }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.filter { $0.status != 0 }.map(\.err))")
        let queue = try stored()
        #expect(queue.items.count == 50)
        #expect(Set(queue.items.map(\.id)).count == 50)
        #expect(queue.items.compactMap(\.queuePosition).sorted() == Array(1...50))
        #expect(Set(queue.items.map(\.title)) == Set((1...50).map { "item \($0)" }))
        #expect(queue.nextID == 51)
    }

    @Test("Two repls and one-shot commands, interleaved: every write is in the store")
    func replsAndCommandsInterleaved() throws {
        _ = try DailyQueueCommand.run(["today", "Monday", "--store", store])
        let first = try Spawned(["repl", "--store", store])
        let second = try Spawned(["repl", "--store", store])
        defer {
            kill(first.pid, SIGKILL)
            kill(second.pid, SIGKILL)
        }
        func step(_ repl: Spawned, _ line: String, expecting output: String) {
            repl.send(line)
            repl.waitForOutput(containing: output)
        }
        func oneShot(_ arguments: String..., expecting output: String) throws {
            let result = try DailyQueueCommand.run(arguments + ["--store", store])
            #expect(result.status == 0 && result.out == output + "\n", "\(arguments): \(result.err)")
        }
        step(first, "add A1 --done", expecting: "added #1 \"A1\" at position 1")
        step(second, "add B1 --done", expecting: "added #2 \"B1\" at position 2")
        try oneShot("add", "C1", "--done", expecting: "added #3 \"C1\" at position 3")
        step(first, "add A2 --done", expecting: "added #4 \"A2\" at position 4")
        step(second, "undone 1", expecting: "removed #1 \"A1\" from position 1 (done became false)")
        try oneShot("move", "3", "1", expecting: "moved #3 \"C1\" from position 2 to 1")
        step(first, "remove 2", expecting: "deleted #2 \"B1\" from position 2")
        step(second, "add B2 --done", expecting: "added #5 \"B2\" at position 3")
        try oneShot("set-day", "4", "fri", expecting: "removed #4 \"A2\" from position 2 (day became Friday)")
        step(first, "list --all", expecting: "#5  B2")
        first.send("quit")
        second.send("quit")
        #expect(first.finish(timeout: 30).status == 0)
        #expect(second.finish(timeout: 30).status == 0)
        let queue = try stored()
        #expect(
            queue.items == [
                StoredItem(
                    id: ItemID(1), title: "A1", done: false, dayOfTheWeek: .monday, queuePosition: nil),
                StoredItem(id: ItemID(3), title: "C1", done: true, dayOfTheWeek: .monday, queuePosition: 1),
                StoredItem(id: ItemID(4), title: "A2", done: true, dayOfTheWeek: .friday, queuePosition: nil),
                StoredItem(id: ItemID(5), title: "B2", done: true, dayOfTheWeek: .monday, queuePosition: 2),
            ])
        #expect(queue.nextID == 6)
    }

    @Test("A store whose lock another process holds: a bounded wait, exit 3, the store untouched")
    func busyStore() throws {
        _ = try DailyQueueCommand.run(["add", "Keep", "--done", "--store", store])
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let descriptor = open(store + ".lock", O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)
        let environment = ["DAILY_QUEUE_LOCK_TIMEOUT": "0.3"]
        for arguments in [["add", "X"], ["list"], ["remove", "1"]] {
            let result = try DailyQueueCommand.run(arguments + ["--store", store], environment: environment)
            #expect(result.status == 3, "\(arguments)")
            #expect(
                result.err
                    == "daily-queue: the store \(store) is busy: another daily-queue held its lock for 0.3 s; "
                    + "nothing was changed, try again\n")
            #expect(result.out.isEmpty)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        flock(descriptor, LOCK_UN)
        #expect(
            try DailyQueueCommand.run(["add", "X", "--store", store], environment: environment).status == 0)
    }

    @Test("Readers share the lock: while one reads, another can list, and a writer waits")
    func sharedReaders() throws {
        _ = try DailyQueueCommand.run(["add", "Keep", "--done", "--store", store])
        let descriptor = open(store + ".lock", O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_SH) == 0)
        let environment = ["DAILY_QUEUE_LOCK_TIMEOUT": "0.3"]
        let listed = try DailyQueueCommand.run(["list", "--store", store], environment: environment)
        #expect(listed.status == 0 && listed.out.contains("Keep"))
        let added = try DailyQueueCommand.run(["add", "X", "--store", store], environment: environment)
        #expect(added.status == 3)
        flock(descriptor, LOCK_UN)
        #expect(
            try DailyQueueCommand.run(["add", "X", "--store", store], environment: environment).status == 0)
    }
}
