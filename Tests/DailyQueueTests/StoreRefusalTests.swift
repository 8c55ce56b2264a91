import DailyQueue
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `daily-queue` as a user file modes apply to. Root ignores file modes, so as root the
/// tests switch to uid/gid 65534 with `setpriv`; without it they are skipped, with the reason.
enum OtherUser {
    static let uid: uid_t = 65534

    /// The launcher (`[]` when the tests already run as a non-root user), or `nil` with a reason.
    static let launcher: [String]? = {
        if geteuid() != 0 { return [] }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else {
            print("skipped: the tests run as root and \(setpriv) is not available to drop to another user")
            return nil
        }
        let launcher = [setpriv, "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]
        guard let probe = try? DailyQueueCommand.run(["--version"], launcher: launcher, timeout: 30),
            probe.status == 0
        else {
            print(
                "skipped: the daily-queue executable cannot be run as uid \(uid) (a folder on its path is private)"
            )
            return nil
        }
        return launcher
    }()

    /// Makes `path` belong to the other user (as root); a no-op for a non-root user.
    static func own(_ path: String) {
        if geteuid() == 0 { chown(path, uid, gid_t(uid)) }
    }
}

func mode(_ path: String) -> UInt32 {
    var info = stat()
    stat(path, &info)
    return UInt32(info.st_mode) & 0o7777
}

@Suite("daily-queue: stores that must be refused, and saves that keep what they must")
struct StoreRefusalTests: OneStoreSuite {
    let folder: URL
    let store: String

    init() throws { (folder, store) = try Self.scratch() }

    func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: store)) }

    @Test(
        "A read-only store is refused before any change: byte-identical, same mode; it can still be listed",
        .enabled(if: OtherUser.launcher != nil))
    func readOnlyStore() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        chmod(store, 0o444)
        let before = try bytes()
        let refused = try run("add", "X", launcher: user)
        #expect(refused.status == 5)
        #expect(
            refused.err
                == "daily-queue: the store \(store) cannot be changed: the file is read-only for this user "
                + "(mode 444); nothing was changed\n")
        #expect(refused.out.isEmpty)
        #expect(try bytes() == before)
        #expect(mode(store) == 0o444)
        let listed = try run("list", launcher: user)
        #expect(listed.status == 0 && listed.out.contains("Keep"))
    }

    @Test("A store whose folder is not writable is refused", .enabled(if: OtherUser.launcher != nil))
    func readOnlyFolder() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        chmod(folder.path, 0o555)
        defer { chmod(folder.path, 0o755) }
        let before = try bytes()
        let refused = try run("done", "1", launcher: user)
        #expect(refused.status == 5)
        #expect(
            refused.err
                == "daily-queue: the store \(store) cannot be changed: its folder \(folder.path) is not writable "
                + "by this user; nothing was changed\n")
        #expect(try bytes() == before)
    }

    @Test(
        "A folder this user may write but not read is refused before any change (a save could not flush it)",
        .enabled(if: OtherUser.launcher != nil))
    func unreadableWritableFolder() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        chmod(folder.path, 0o300)
        defer { chmod(folder.path, 0o755) }
        let refused = try run("add", "X", launcher: user)
        #expect(refused.status == 5)
        #expect(
            refused.err
                == "daily-queue: the store \(store) cannot be changed: its folder \(folder.path) cannot be read "
                + "by this user, so a save could neither flush the folder to the disk nor remove a killed "
                + "writer's temporary files; nothing was changed\n")
        chmod(folder.path, 0o755)
        #expect(try titles() == ["Keep"])
    }

    @Test(
        "Root saving a user's store under umask 077 gives the lock file to that user, who can still save",
        .enabled(if: OtherUser.launcher != nil && geteuid() == 0))
    func rootSaveKeepsTheLockUsable() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "A", "--done", launcher: user).status == 0)
        try FileManager.default.removeItem(atPath: store + ".lock")  // made again by root below
        let strictRoot = ["/bin/sh", "-c", "umask 077; exec \"$0\" \"$@\""]
        #expect(try run("add", "B", "--done", launcher: strictRoot).status == 0)
        var info = stat()
        stat(store + ".lock", &info)
        #expect(info.st_uid == OtherUser.uid && info.st_gid == gid_t(OtherUser.uid))
        let after = try run("add", "C", "--done", launcher: user)
        #expect(after.status == 0, "\(after.err)")
        #expect(try titles() == ["A", "B", "C"])
    }

    @Test(
        "A lock file this user may not open is named in the refusal; the store is unchanged",
        .enabled(if: OtherUser.launcher != nil && geteuid() == 0))
    func unopenableLockFile() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        chown(store + ".lock", 0, 0)
        chmod(store + ".lock", 0o600)
        let before = try bytes()
        let refused = try run("add", "X", launcher: user)
        #expect(refused.status == 5)
        #expect(
            refused.err
                == "daily-queue: the store \(store) cannot be changed: its lock file \(store).lock belongs to "
                + "uid 0 with mode 600, which this user may not open; give it to the store's owner, or delete "
                + "it while no daily-queue runs; nothing was changed\n")
        #expect(try bytes() == before)
    }

    @Test(
        "An unreadable folder and an unreadable store each get their own error",
        .enabled(if: OtherUser.launcher != nil))
    func unreadable() throws {
        let user = try #require(OtherUser.launcher)
        OtherUser.own(folder.path)
        #expect(try run("add", "Keep", "--done", launcher: user).status == 0)
        chmod(store, 0o000)
        let file = try run("list", launcher: user)
        #expect(file.status == 5)
        #expect(file.err == "daily-queue: cannot read the store \(store): permission denied\n")
        chmod(store, 0o644)
        chmod(folder.path, 0o000)
        defer { chmod(folder.path, 0o755) }
        for arguments in [["list"], ["add", "X"]] {
            let result = try DailyQueueCommand.run(arguments + ["--store", store], launcher: user)
            #expect(result.status == 5, "\(arguments)")
            #expect(
                result.err
                    == "daily-queue: cannot open the folder \(folder.path) of the store \(store): permission denied\n"
            )
            #expect(result.out.isEmpty)
        }
    }

    @Test("A directory, a named pipe and a device are refused with their own messages (exit 4)")
    func notAFile() throws {
        let directory = try temporaryFolder().path
        for arguments in [["list"], ["add", "X"]] {
            let result = try DailyQueueCommand.run(arguments + ["--store", directory])
            #expect(result.status == 4)
            #expect(
                result.err
                    == "daily-queue: the store \(directory) is a directory; give the path of a file, such as "
                    + "\(directory)/queue.json\n")
        }
        let pipe = folder.appendingPathComponent("pipe").path
        #expect(mkfifo(pipe, 0o644) == 0)
        for (path, kind) in [(pipe, "a named pipe"), ("/dev/null", "a device")] {
            for arguments in [["list"], ["add", "X"]] {
                let result = try DailyQueueCommand.run(arguments + ["--store", path], timeout: 30)
                #expect(result.status == 4)
                #expect(
                    result.err
                        == "daily-queue: the store \(path) is \(kind), not a regular file; nothing was read or written\n"
                )
            }
        }
    }

    @Test(
        "Valid JSON with inconsistent content is refused as corrupt and never rewritten",
        arguments: [
            (
                #"{"formatVersion":1,"currentDay":1,"nextID":3,"items":[{"id":1,"title":"A","done":true,"dayOfTheWeek":1,"queuePosition":1},{"id":1,"title":"B","done":true,"dayOfTheWeek":1,"queuePosition":2}]}"#,
                "the id #1 appears twice"
            ),
            (
                #"{"formatVersion":1,"currentDay":1,"nextID":3,"items":[{"id":1,"title":"A","done":true,"dayOfTheWeek":1,"queuePosition":1},{"id":2,"title":"B","done":true,"dayOfTheWeek":1,"queuePosition":3}]}"#,
                "the queue positions are 1, 3, not 1...2"
            ),
            (
                #"{"formatVersion":1,"currentDay":1,"nextID":2,"items":[{"id":5,"title":"A","done":true,"dayOfTheWeek":1,"queuePosition":1}]}"#,
                "nextID 2 is not above the largest id #5"
            ),
        ])
    func inconsistent(content: String, reason: String) throws {
        try Data(content.utf8).write(to: URL(fileURLWithPath: store))
        for arguments in [["add", "X"], ["list"], ["remove", "1"]] {
            let result = try DailyQueueCommand.run(arguments + ["--store", store])
            #expect(result.status == 4, "\(arguments)")
            #expect(
                result.err
                    == "daily-queue: the store \(store) is corrupt (\(reason)); it was left untouched\n")
        }
        #expect(try bytes() == Data(content.utf8))
    }

    @Test("A save keeps the store's mode, and (as root) its owner")
    func keepsModeAndOwner() throws {
        #expect(try run("add", "A", "--done").status == 0)
        chmod(store, 0o640)
        if geteuid() == 0 { chown(store, OtherUser.uid, gid_t(OtherUser.uid)) }
        #expect(try run("add", "B", "--done").status == 0)
        #expect(mode(store) == 0o640)
        var info = stat()
        stat(store, &info)
        #expect(info.st_uid == (geteuid() == 0 ? OtherUser.uid : geteuid()))
        #expect(try run("list").out.contains("B"))
    }

    /// Whether this process runs under the thread sanitizer, whose runtime cannot start under a
    /// small file-size limit.
    static let sanitized: Bool = {
        #if canImport(Darwin)
            let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
            let everywhere = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        #endif
        return dlsym(everywhere, "__tsan_init") != nil
    }()

    @Test(
        "A write that fails for lack of space keeps the old store and leaves no temporary file",
        .disabled(if: sanitized, "the thread sanitizer's runtime fails under a 1-block file-size limit"))
    func fullDisk() throws {
        // A file-size limit of 1 block makes the temporary file's write fail, as a full disk would.
        let items = (1...30).map {
            StoredItem(
                id: ItemID($0), title: "an item with a title long enough to fill space \($0)", done: true,
                dayOfTheWeek: .monday, queuePosition: $0)
        }
        try JSONFileQueueStore(url: URL(fileURLWithPath: store)).save(
            StoredQueue(currentDay: .monday, nextID: 31, items: items))
        let before = try bytes()
        #expect(before.count > 2048)
        let limited = try run(
            "add", "X", "--done", launcher: ["/bin/sh", "-c", "ulimit -f 1 && exec \"$@\"", "sh"])
        #expect(limited.status == 5)
        #expect(limited.err == "daily-queue: cannot write the store \(store): file too large\n")
        #expect(try bytes() == before)
        #expect(
            try !FileManager.default.contentsOfDirectory(atPath: folder.path).contains {
                $0.hasSuffix(".tmp")
            })
    }

    @Test("A store reached through a symbolic link: a save replaces the target; the link stays")
    func symbolicLink() throws {
        #expect(try run("add", "A", "--done").status == 0)
        let link = try temporaryFolder().appendingPathComponent("link.json").path
        #expect(symlink(store, link) == 0)
        let result = try DailyQueueCommand.run(["add", "B", "--done", "--store", link])
        #expect(result.status == 0, "\(result.err)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == store)
        #expect(
            try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load()?.items.map(\.title) == ["A", "B"])
    }

    @Test("A store in a folder that does not exist is refused, for reading too (no empty list)")
    func missingFolder() throws {
        let missing = folder.appendingPathComponent("no-such-folder")
        let path = missing.appendingPathComponent("queue.json").path
        for arguments in [["list"], ["add", "X"]] {
            let result = try DailyQueueCommand.run(arguments + ["--store", path])
            #expect(result.status == 5, "\(arguments)")
            #expect(
                result.err
                    == "daily-queue: the folder \(missing.path) of the store \(path) does not exist or is not a "
                    + "folder; create it first\n")
            #expect(result.out.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }
}
