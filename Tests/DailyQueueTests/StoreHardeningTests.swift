import DailyQueue
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Cases found by an audit that ran the tool as a hostile user would: each test fails without
/// its fix.
@Suite(
    "daily-queue: links, lock files, neighbours' files, hostile ids and lost output", .timeLimit(.minutes(2)))
struct StoreHardeningTests: OneStoreSuite {
    let folder: URL
    let store: String

    init() throws { (folder, store) = try Self.scratch() }

    /// Only a system call trace shows the syncs that make a save survive a power cut: the new
    /// file's content reaches the disk before the rename puts it in place, and the rename itself
    /// (the folder) after. Runs where `strace` is installed (it is on CI's machines).
    @Test(
        "A save syncs the new file, renames it over the store, then syncs the folder (traced)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func saveSyncsBeforeAndAfterTheRename() throws {
        #expect(try run("add", "A", "--done").status == 0)  // the store exists: this is an update
        let trace = folder.appendingPathComponent("trace").path
        let calls = "trace=open,openat,fsync,fdatasync,rename,renameat,renameat2"
        let result = try run(
            "add", "B", "--done", launcher: ["/usr/bin/strace", "-f", "-qq", "-e", calls, "-o", trace])
        #expect(result.status == 0)
        #expect(try titles() == ["A", "B"])
        func label(_ path: String) -> String {
            if path == store { return "store" }
            if path == folder.path { return "folder" }
            let name = (path as NSString).lastPathComponent
            return name.hasPrefix(".queue.json.") && name.hasSuffix(".tmp") ? "temporary" : path
        }
        var opened: [Int: String] = [:]  // what each descriptor was last opened on
        var steps: [String] = []
        for line in try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n") {
            let quoted = line.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
            guard let equals = line.range(of: "= ", options: .backwards),
                let returned = Int(line[equals.upperBound...].prefix { !$0.isWhitespace }), returned >= 0
            else { continue }
            if line.contains("open"), let path = quoted.first {
                opened[returned] = path
            } else if let call = line.range(of: "sync(") {
                let descriptor = Int(line[call.upperBound...].prefix { $0.isNumber }) ?? -1
                steps.append("sync " + label(opened[descriptor] ?? "?"))
            } else if line.contains("rename"), quoted.count >= 2 {
                steps.append("rename " + label(quoted[0]) + " " + label(quoted[1]))
            }
        }
        #expect(steps == ["sync temporary", "rename temporary store", "sync folder"])
    }

    @Test("A save deletes only this store's own leftover temporary files")
    func onlyOwnTemporaryFiles() throws {
        #expect(try run("add", "A", "--done").status == 0)
        let stale = folder.appendingPathComponent(".queue.json.3fa2b7c1d0e9.tmp").path
        let kept = [
            ".queue.json.draft.tmp",  // another program's atomic save
            ".queue.json.bak.3fa2b7c1d0e9.tmp",  // the store `queue.json.bak`'s writer, under its own lock
            ".queue.json.3FA2.tmp",  // not a name this store's writers make (uppercase)
            ".queue.json..tmp",
        ].map { folder.appendingPathComponent($0).path }
        for path in [stale] + kept {
            #expect(FileManager.default.createFile(atPath: path, contents: Data("precious".utf8)))
        }
        #expect(try run("add", "B", "--done").status == 0)
        #expect(!FileManager.default.fileExists(atPath: stale))
        for path in kept {
            #expect(FileManager.default.contents(atPath: path) == Data("precious".utf8), "\(path)")
        }
    }

    @Test("A link to a store not made yet: the first save makes the store there; the link stays")
    func danglingLink() throws {
        let link = try temporaryFolder().appendingPathComponent("link.json").path
        #expect(symlink(store, link) == 0)
        let result = try DailyQueueCommand.run(["add", "A", "--done", "--store", link])
        #expect(result.status == 0, "\(result.err)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == store)
        #expect(try titles() == ["A"])
        #expect(try titles(link) == ["A"])
    }

    @Test("A relative link through another link to a store not made yet is followed to its end")
    func danglingLinkChain() throws {
        let first = folder.appendingPathComponent("first.json").path
        let second = folder.appendingPathComponent("second.json").path
        #expect(symlink("second.json", first) == 0)
        #expect(symlink("queue.json", second) == 0)
        #expect(try DailyQueueCommand.run(["add", "A", "--done", "--store", first]).status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: first)) == "second.json")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: second)) == "queue.json")
        #expect(try titles() == ["A"])
    }

    @Test("A link to a store in a folder that does not exist is refused; the link stays")
    func danglingLinkToMissingFolder() throws {
        let link = folder.appendingPathComponent("link.json").path
        let missing = folder.appendingPathComponent("no-such-folder")
        let target = missing.appendingPathComponent("queue.json").path
        #expect(symlink(target, link) == 0)
        let result = try DailyQueueCommand.run(["add", "A", "--store", link])
        #expect(result.status == 5)
        #expect(
            result.err
                == "daily-queue: the folder \(missing.path) of the store \(target) does not exist or is not a "
                + "folder; create it first\n")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target)
    }

    @Test("A named pipe at the lock file's path: reads go on, writes are refused, nothing hangs")
    func pipeAtLockPath() throws {
        #expect(try run("add", "A", "--done").status == 0)
        let before = FileManager.default.contents(atPath: store)
        let lock = store + ".lock"
        unlink(lock)
        #expect(mkfifo(lock, 0o644) == 0)
        // Only child processes touch the store from here on: each has a deadline, where this
        // process, blocked in an open, would hang the suite.
        let listed = try DailyQueueCommand.run(
            ["list", "--store", store], environment: ["DAILY_QUEUE_LOCK_TIMEOUT": "1"], timeout: 30)
        #expect(listed.status == 0, "\(listed.err)")
        let added = try DailyQueueCommand.run(
            ["add", "B", "--store", store], environment: ["DAILY_QUEUE_LOCK_TIMEOUT": "1"], timeout: 30)
        #expect(added.status == 5)
        #expect(
            added.err
                == "daily-queue: cannot write the store \(store): its lock file \(lock) is not a regular file\n"
        )
        #expect(FileManager.default.contents(atPath: store) == before)
    }

    @Test("A store whose nextID is not positive is refused as corrupt, and left untouched")
    func hostileNextID() throws {
        for nextID in ["0", "-3"] {
            let content = Data(#"{"currentDay":1,"formatVersion":1,"items":[],"nextID":\#(nextID)}"#.utf8)
            #expect(FileManager.default.createFile(atPath: store, contents: content))
            let result = try run("add", "A")
            #expect(result.status == 4, "\(nextID)")
            #expect(result.err.contains("nextID \(nextID) is not positive"), "\(result.err)")
            #expect(FileManager.default.contents(atPath: store) == content)
        }
    }

    @Test("The last id is given once; then an add is refused, and the store stays readable")
    func lastID() throws {
        let content = Data(#"{"currentDay":1,"formatVersion":1,"items":[],"nextID":\#(Int.max - 1)}"#.utf8)
        #expect(FileManager.default.createFile(atPath: store, contents: content))
        #expect(try run("add", "Last", "--done").status == 0)
        let before = FileManager.default.contents(atPath: store)
        let refused = try run("add", "One more")
        #expect(refused.status == 1)
        #expect(
            refused.err
                == "daily-queue: no item can be added: every id has been given (nextID is \(Int.max))\n")
        #expect(FileManager.default.contents(atPath: store) == before)
        #expect(try run("list").status == 0)
        #expect(try titles() == ["Last"])
    }

    @Test("Output that cannot be written: the change is saved, and the exit status says 6")
    func lostOutput() throws {
        // A full disk where the system has a device for it (Linux), and a closed standard output.
        let redirects = FileManager.default.fileExists(atPath: "/dev/full") ? [">/dev/full", ">&-"] : [">&-"]
        for redirect in redirects {
            let launcher = ["/bin/sh", "-c", "exec \"$0\" \"$@\" \(redirect)"]
            let result = try run("add", "A \(redirect)", "--done", launcher: launcher)
            #expect(result.status == 6, "\(redirect): \(result.err)")
            #expect(
                result.err
                    == "daily-queue: the output could not be written (the command itself took effect)\n")
        }
        #expect(try titles() == redirects.map { "A \($0)" })
        // A refused command keeps its own status.
        let refused = try run("done", "99", launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" >&-"])
        #expect(refused.status == 1)
    }

    @Test("A reader that closes the pipe early: no signal kills the tool, the status says 6")
    func closedPipe() throws {
        guard let executable = DailyQueueCommand.executable else {
            throw DailyQueueCommand.MissingExecutable()
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["add", "A", "--done", "--store", store]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try pipe.fileHandleForReading.close()  // nobody will read: a write fails with EPIPE
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning { process.terminate() }
        // Lets Foundation finish with the process (it keeps the object until then).
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 6)
        #expect(try titles() == ["A"])
    }

    @Test("A store with a field this program does not know is refused, not rewritten without it")
    func unknownFields() throws {
        for (content, field) in [
            (#"{"currentDay":1,"formatVersion":1,"items":[],"nextID":1,"notes":"keep me"}"#, "notes"),
            (
                #"{"currentDay":1,"formatVersion":1,"items":[{"dayOfTheWeek":1,"done":true,"id":1,"tags":["x"],"#
                    + #""title":"A"}],"nextID":2}"#,
                "items.0.tags"
            ),
        ] {
            #expect(FileManager.default.createFile(atPath: store, contents: Data(content.utf8)))
            let result = try run("add", "B")
            #expect(result.status == 4)
            #expect(
                result.err
                    == "daily-queue: the store \(store) is corrupt (unknown field \"\(field)\", which a save "
                    + "would lose); it was left untouched\n")
            #expect(FileManager.default.contents(atPath: store) == Data(content.utf8))
        }
    }

    @Test("A title from a store file is printed without its control characters")
    func controlCharactersInStoredTitle() throws {
        let title = "\u{1B}]0;pwned\u{07}\u{1B}[2J\nFAKE LINE"
        let content = try JSONEncoder().encode(
            StoredQueue(
                currentDay: .monday, nextID: 2,
                items: [
                    StoredItem(
                        id: ItemID(1), title: title, done: false, dayOfTheWeek: .monday, queuePosition: nil)
                ]))
        #expect(FileManager.default.createFile(atPath: store, contents: content))
        let result = try run("done", "1")
        #expect(result.status == 0, "\(result.err)")
        #expect(
            !result.out.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
        #expect(result.out.contains("\u{FFFD}]0;pwned\u{FFFD}\u{FFFD}[2J\u{FFFD}FAKE LINE"))
        #expect(result.out.split(separator: "\n").count == result.out.filter { $0 == "\n" }.count)
        for arguments in [["graph"], ["graph", "--mermaid"]] {
            let graph = try DailyQueueCommand.run(arguments + ["--store", store])
            #expect(graph.status == 0, "\(graph.err)")
            let controls = graph.out.unicodeScalars.filter { $0.properties.generalCategory == .control }
            #expect(controls.allSatisfy { $0 == "\n" })
            #expect(graph.out.contains("\u{FFFD}]0;pwned"), "\(graph.out)")
        }
    }

    @Test(
        "A store whose group this user does not have is refused: a save would change its group",
        .enabled(if: geteuid() == 0 && OtherUser.launcher != nil))  // root hands out the group
    func foreignGroup() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        #expect(chown(store, OtherUser.uid, 0) == 0)
        #expect(chmod(store, 0o660) == 0)
        let before = FileManager.default.contents(atPath: store)
        let refused = try run("add", "X", launcher: user)
        #expect(refused.status == 5)
        #expect(
            refused.err
                == "daily-queue: the store \(store) cannot be changed: its group (gid 0) is not one of this "
                + "user's, and a save would change its group; nothing was changed\n")
        #expect(FileManager.default.contents(atPath: store) == before)
        var info = stat()
        #expect(stat(store, &info) == 0 && info.st_gid == 0)
    }
}
