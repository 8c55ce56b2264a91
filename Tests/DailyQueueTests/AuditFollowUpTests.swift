import DailyQueue
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lesser cases of the hostile user's audit: each test fails without its fix.
@Suite(
    "daily-queue: repeated options, odd environments, hard links, long names, endless input",
    .timeLimit(.minutes(2)))
struct AuditFollowUpTests: OneStoreSuite {
    let folder: URL
    let store: String

    init() throws { (folder, store) = try Self.scratch() }

    @Test("An option with a value given twice is refused, not decided by the last one")
    func repeatedOption() throws {
        let flagValue = try run("add", "X", "--done=yes")
        #expect(flagValue.status == 2)
        #expect(flagValue.err == "daily-queue: --done does not take a value (see daily-queue add --help)\n")
        let unknown = try run("add", "X", "--colour=red")
        #expect(unknown.err == "daily-queue: add does not take --colour (see daily-queue add --help)\n")
        for arguments in [
            ["add", "X", "--day", "mon", "--day", "tue"], ["add", "X", "--day=mon", "--day", "tue"],
            ["add", "X", "--day", "mon", "--day=tue"],
        ] {
            let result = try DailyQueueCommand.run(arguments + ["--store", store])
            #expect(result.status == 2)
            #expect(result.err == "daily-queue: --day is given twice (see daily-queue add --help)\n")
        }
        let twice = try DailyQueueCommand.run(["list", "--store", store, "--store=\(store).other"])
        #expect(twice.status == 2)
        #expect(twice.err == "daily-queue: --store is given twice (see daily-queue list --help)\n")
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(try run("add", "X", "--day", "tue").status == 0)
    }

    @Test("DAILY_QUEUE_LOCK_TIMEOUT is read only as decimal seconds")
    func lockTimeoutIsDecimal() throws {
        for text in ["0x10", "1e3", "inf", "nan", "", ".", "1.2.3", "-1", " 5", "5s", "2000000"] {
            let result = try DailyQueueCommand.run(
                ["list", "--store", store], environment: ["DAILY_QUEUE_LOCK_TIMEOUT": text])
            #expect(result.status == 2, "\(text)")
            #expect(
                result.err
                    == "daily-queue: DAILY_QUEUE_LOCK_TIMEOUT must be a decimal number of seconds up to 1000000 "
                    + "(such as 5 or 0.5), not \(text) (see daily-queue list --help)\n", "\(text)")
        }
        for text in ["5", "0.5", ".5", "0", "1000000"] {
            let result = try DailyQueueCommand.run(
                ["list", "--store", store], environment: ["DAILY_QUEUE_LOCK_TIMEOUT": text])
            #expect(result.status == 0, "\(text): \(result.err)")
        }
    }

    @Test("An empty or relative HOME is refused; ~ in --store is HOME, as a shell reads it")
    func home() throws {
        for (home, shown) in [("", "empty"), ("relative/folder", "a relative path (relative/folder)")] {
            let result = try DailyQueueCommand.run(["add", "X"], environment: ["HOME": home])
            #expect(result.status == 2)
            #expect(
                result.err
                    == "daily-queue: HOME is \(shown); set it to your home folder, or give --store PATH "
                    + "(see daily-queue add --help)\n")
        }
        let added = try DailyQueueCommand.run(
            ["add", "X", "--done", "--store=~/tilde.json"], environment: ["HOME": folder.path + "/"])
        #expect(added.status == 0, "\(added.err)")
        #expect(try titles(folder.appendingPathComponent("tilde.json").path) == ["X"])
        let byDefault = try DailyQueueCommand.run(["add", "Y", "--done"], environment: ["HOME": folder.path])
        #expect(byDefault.status == 0, "\(byDefault.err)")
        #expect(try titles(folder.appendingPathComponent(".daily-queue.json").path) == ["Y"])
        let folderItself = try DailyQueueCommand.run(
            ["list", "--store", "~"], environment: ["HOME": folder.path])
        #expect(folderItself.status == 4)
        #expect(folderItself.err.hasPrefix("daily-queue: the store \(folder.path) is a directory"))
    }

    @Test("A format version below 1 is refused as corrupt, and the file left untouched")
    func formatVersionBelowOne() throws {
        for version in [0, -5] {
            let content = Data(#"{"formatVersion":\#(version),"currentDay":1,"nextID":1,"items":[]}"#.utf8)
            #expect(FileManager.default.createFile(atPath: store, contents: content))
            #expect(
                throws: StoreError.corrupt(path: store, reason: "formatVersion \(version) is not a version")
            ) {
                try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load()
            }
            #expect(try run("add", "X").status == 4)
            #expect(FileManager.default.contents(atPath: store) == content)
        }
    }

    @Test("Reading a store that does not exist leaves nothing behind; only a writer makes the lock file")
    func readMakesNoLockFile() throws {
        let listed = try run("list")
        #expect(listed.status == 0, "\(listed.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        #expect(try run("add", "A", "--done").status == 0)
        #expect(FileManager.default.fileExists(atPath: store + ".lock"))
        // A store whose lock file is gone (copied here without it) is read unlocked.
        #expect(unlink(store + ".lock") == 0)
        let again = try run("list")
        #expect(again.status == 0 && again.out.contains("A"))
        #expect(!FileManager.default.fileExists(atPath: store + ".lock"))
    }

    @Test("A newer format is reported as such also when its content reads as this one's")
    func newerFormatThatDecodes() throws {
        for content in [
            #"{"formatVersion":2,"currentDay":1,"nextID":1,"items":[]}"#,  // reads as version 1
            #"{"formatVersion":2,"currentDay":1,"nextID":1,"items":[],"extra":1}"#,
            #"{"formatVersion":2,"shape":"another"}"#,  // does not
        ] {
            #expect(FileManager.default.createFile(atPath: store, contents: Data(content.utf8)))
            #expect(throws: StoreError.newerFormat(path: store, found: 2, supported: 1)) {
                try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load()
            }
            #expect(try run("add", "X").status == 4)
            #expect(FileManager.default.contents(atPath: store) == Data(content.utf8))
        }
        // As before one pass did it all: an inconsistency is reported before an unknown field.
        let both =
            #"{"formatVersion":1,"currentDay":1,"nextID":1,"notes":0,"#
            + #""items":[{"id":1,"title":"A","done":true,"dayOfTheWeek":1}]}"#
        #expect(FileManager.default.createFile(atPath: store, contents: Data(both.utf8)))
        #expect(throws: StoreError.corrupt(path: store, reason: "nextID 1 is not above the largest id #1")) {
            try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load()
        }
        // The first unknown field is named by its item's index.
        let second = Data(
            (#"{"formatVersion":1,"currentDay":1,"nextID":3,"items":["#
                + #"{"id":1,"title":"A","done":true,"dayOfTheWeek":1},"#
                + #"{"id":2,"title":"B","done":true,"dayOfTheWeek":1,"zeta":0,"alpha":0}]}"#).utf8)
        #expect(FileManager.default.createFile(atPath: store, contents: second))
        let reason = #"unknown field "items.1.alpha", which a save would lose"#
        #expect(throws: StoreError.corrupt(path: store, reason: reason)) {
            try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load()
        }
    }

    @Test("A character of a title is at most 32 Unicode scalars; 200 of the longest emoji pass")
    func characterScalars() throws {
        let marks = { (count: Int) in "a" + String(repeating: "\u{301}", count: count) }
        #expect(try ItemTitle.validated(marks(31)) == marks(31))
        #expect(throws: QueueError.characterTooComplex(scalars: 33, maximum: 32)) {
            try ItemTitle.validated("ok " + marks(32))
        }
        #expect(throws: QueueError.characterTooComplex(scalars: 60_001, maximum: 32)) {
            try ItemTitle.validated(marks(60_000))
        }
        #expect(
            QueueError.characterTooComplex(scalars: 33, maximum: 32).description
                == "a character of a title can be made of at most 32 Unicode scalars (a letter and its marks); "
                + "one of this title's is made of 33")
        // A kiss with two skin tones: 10 scalars, one character.
        let kiss = String(repeating: "👩🏻\u{200D}❤️\u{200D}💋\u{200D}👨🏿", count: 200)
        #expect(try ItemTitle.validated(kiss) == kiss)
        let result = try run("add", marks(40))
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("A store with two names (hard links) is refused before a save would split it")
    func hardLinks() throws {
        #expect(try run("add", "A", "--done").status == 0)
        let other = folder.appendingPathComponent("other.json").path
        #expect(link(store, other) == 0)
        let before = FileManager.default.contents(atPath: store)
        let result = try run("add", "B", "--done")
        #expect(result.status == 5)
        #expect(
            result.err
                == "daily-queue: the store \(store) cannot be changed: it has 2 names (hard links), and a save "
                + "would replace it under this one only, leaving the others with the old content; use a "
                + "symbolic link instead; nothing was changed\n")
        #expect(FileManager.default.contents(atPath: store) == before)
        #expect(try titles(other) == ["A"])
        #expect(try run("list").status == 0)  // reading is not refused
        #expect(unlink(other) == 0)
        #expect(try run("add", "B", "--done").status == 0)
        #expect(try titles() == ["A", "B"])
    }

    @Test("A store name too long for its temporary file is refused up front; one byte less is saved")
    func longName() throws {
        let longest = Int(pathconf(folder.path, Int32(_PC_NAME_MAX)))
        try #require(longest > 30)
        // One byte too long, and so long that the lock file's name (5 bytes more) does not fit.
        for length in [longest - 21, longest - 2] {
            let tooLong = folder.appendingPathComponent(String(repeating: "n", count: length)).path
            let result = try DailyQueueCommand.run(["add", "A", "--store", tooLong])
            #expect(result.status == 5)
            #expect(
                result.err
                    == "daily-queue: the store \(tooLong) cannot be changed: its name is \(length) bytes long, "
                    + "and a save writes a temporary file beside it whose name is 22 bytes longer, over the "
                    + "\(longest) its folder allows; nothing was changed\n")
        }
        let fits = folder.appendingPathComponent(String(repeating: "n", count: longest - 22)).path
        #expect(try DailyQueueCommand.run(["add", "A", "--done", "--store", fits]).status == 0)
        #expect(try titles(fits) == ["A"])
    }

    @Test("The repl reads lines of at most 64 KiB: a longer one ends it, with what came before run")
    func replLineLimit() throws {
        let long = String(repeating: "z", count: 65_537)
        let result = try DailyQueueCommand.run(
            ["repl", "--store", store], input: "add A --done\r\nadd \(long)\nadd C --done\n")
        #expect(result.status == 1)
        #expect(result.err == "daily-queue: line 2 is longer than 65536 bytes; the repl stops there\n")
        #expect(try titles() == ["A"])
        // Input with no line break at all, longer than a line may be.
        let endless = try DailyQueueCommand.run(
            ["repl", "--store", store], input: String(repeating: "\0", count: 200_000))
        #expect(endless.status == 1)
        #expect(endless.err == "daily-queue: line 1 is longer than 65536 bytes; the repl stops there\n")
        // 65,537 bytes is one too many; with "\r\n", 65,536 bytes and the "\r" are read.
        let over = try DailyQueueCommand.run(
            ["repl", "--store", store], input: "add " + String(repeating: "v", count: 65_533) + "\n")
        #expect(over.err == "daily-queue: line 1 is longer than 65536 bytes; the repl stops there\n")
        let crlf = try DailyQueueCommand.run(
            ["repl", "--store", store],
            input: "add " + String(repeating: "u", count: 65_532) + "\r\nadd E --done")
        #expect(crlf.err.hasPrefix("daily-queue: a title can have at most 200 characters"))
        // A last line without a line break, and a line of exactly 65,536 bytes, are read.
        let exact = "add " + String(repeating: "w", count: 65_532)
        let fine = try DailyQueueCommand.run(["repl", "--store", store], input: "\(exact)\nadd D --done")
        #expect(fine.status == 1)  // the 65,532-character title is refused, as a title
        #expect(fine.err.hasPrefix("daily-queue: a title can have at most 200 characters"))
        #expect(try titles() == ["A", "E", "D"])
    }
}
