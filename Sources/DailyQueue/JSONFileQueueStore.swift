import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store in a JSON file, safe to share between processes: any number of processes may run
/// commands on it at once, and none loses a write.
///
/// - Every `load` and `save` runs under an advisory lock on `PATH.lock`, beside the store
///   (shared to read, exclusive to write); `transaction(_:_:)` holds it around a whole
///   load → change → save. The wait is bounded by `lockTimeout`, then `.busy`.
/// - A save writes a temporary file in the same folder with the store's mode and owner, flushes
///   it to the disk, renames it over the store and flushes the folder: after a crash, `kill -9`
///   or a full disk, the store holds the old or the new content, never a mix.
/// - A file it cannot use (not JSON, inconsistent, a newer format, a directory, a pipe) is
///   reported and never overwritten; a store this user may not change is refused before any
///   change, and so is a store with several names (hard links), which a save would split.
public final class JSONFileQueueStore: QueueStore {
    /// The store file.
    public let url: URL
    /// The lock file beside the store: the store's path followed by `.lock`.
    public let lockURL: URL
    /// The file read and replaced: `url`, or the file it links to when `url` is a symbolic
    /// link (a save replaces the target; the link stays).
    let path: String
    /// How long to wait for another process's lock, in seconds.
    public let lockTimeout: Double
    /// Runs after the temporary file is written and before the rename; tests use it to simulate
    /// a crash at the worst moment.
    let beforeRename: (@Sendable () throws -> Void)?

    /// A store in the file at `url` (created on the first save); a busy store is waited for up
    /// to `lockTimeout` seconds (default 5).
    ///
    /// Thread safety: the store is `Sendable`. Callbacks: none.
    /// - Complexity: O(1); nothing is read until `load()`.
    public convenience init(url: URL, lockTimeout: Double = 5) {
        self.init(url: url, lockTimeout: lockTimeout, beforeRename: nil)
    }

    package init(url: URL, lockTimeout: Double = 5, beforeRename: (@Sendable () throws -> Void)?) {
        self.url = url
        self.path = POSIXFile.linkTarget(url.path) ?? url.path
        self.lockURL = URL(fileURLWithPath: path + ".lock")
        self.lockTimeout = max(0, lockTimeout.isFinite ? lockTimeout : 5)
        self.beforeRename = beforeRename
    }

    var folder: String { URL(fileURLWithPath: path).deletingLastPathComponent().path }

    /// Reads the file under the shared lock (or inside the caller's transaction); `nil` when
    /// it does not exist.
    ///
    /// Thread safety: safe from any thread and process (reads never see a half-written file).
    /// Callbacks: none.
    /// - Throws: `.busy`, `.isDirectory`, `.notRegularFile`, `.folderUnreadable`, `.unreadable`,
    ///   `.corrupt` (also for valid JSON with inconsistent content, or with a field a save would
    ///   lose) or `.newerFormat`; the file is never changed.
    /// - Complexity: O(file size).
    public func load() throws(StoreError) -> StoredQueue? {
        try locked(.read) { () throws(StoreError) in try read() }
    }

    /// Replaces the store's content under the exclusive lock (or inside the caller's write
    /// transaction): temporary file, flush, rename, flush of the folder. The file keeps its mode
    /// and owner.
    ///
    /// Thread safety: safe from any thread and process. Callbacks: none.
    /// - Throws: `.busy`, `.readOnly`, `.folderMissing`, `.isDirectory`, `.notRegularFile` or
    ///   `.unwritable`; the old file is intact.
    /// - Complexity: O(size of the queue).
    public func save(_ queue: StoredQueue) throws(StoreError) {
        try locked(.write) { () throws(StoreError) in _ = try write(queue) }
    }

    /// `load()`, with the revision of what was read: the file's bytes (`nil` when there is no
    /// file), read under the same lock.
    ///
    /// Thread safety: safe from any thread and process. Callbacks: none.
    /// - Throws: as `load()`.
    /// - Complexity: O(file size).
    public func loadWithRevision() throws(StoreError) -> (queue: StoredQueue?, revision: StoreRevision) {
        try locked(.read) { () throws(StoreError) in
            let bytes = try readBytes()
            return (try bytes.map { bytes throws(StoreError) in try decode(bytes) }, StoreRevision(bytes))
        }
    }

    /// `save(_:)`, only if the file still holds the bytes `revision` names (or, for a revision
    /// of nothing stored, there is still no file): under the exclusive lock, the file is read
    /// and compared, then replaced. Returns the revision of what was written.
    ///
    /// Thread safety: safe from any thread and process. Callbacks: none.
    /// - Throws: `.changedElsewhere` if the file changed since (nothing is written); otherwise
    ///   as `save(_:)`, and `.unreadable` if the file cannot be read for the comparison.
    /// - Complexity: O(file size + size of the queue).
    public func save(
        _ queue: StoredQueue, ifUnchangedSince revision: StoreRevision
    ) throws(StoreError) -> StoreRevision {
        try locked(.write) { () throws(StoreError) in
            guard try readBytes() == revision.content else { throw .changedElsewhere(path: path) }
            return StoreRevision(try write(queue))
        }
    }

    // MARK: - Reading and writing (the caller holds the lock)

    /// What is at the store's path; throws for anything that cannot be a store.
    func inspect() throws(StoreError) -> POSIXFile.Status {
        let status: POSIXFile.Status
        do throws(POSIXFile.Failure) {
            status = try POSIXFile.status(path)
        } catch {
            switch error.code {
            case EACCES: throw .folderUnreadable(path: path, folder: folder, reason: error.reason)
            case ENOTDIR: throw .folderMissing(path: path, folder: folder)
            default: throw .unreadable(path: path, reason: error.reason)
            }
        }
        switch status {
        case .directory: throw .isDirectory(path: path)
        case .other(let kind): throw .notRegularFile(path: path, kind: kind)
        case .missing, .file: return status
        }
    }

    /// Refuses a store whose name leaves no room for the temporary file a save writes beside it
    /// (`.NAME.HEX.tmp`, see `write`: 22 bytes more than NAME). Checked before the lock is
    /// taken, whose file (`NAME.lock`) is longer than NAME too.
    func checkNameFits() throws(StoreError) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let longest = POSIXFile.longestName(in: folder)
        if name.utf8.count + 22 > longest {
            throw .readOnly(
                path: path,
                reason: "its name is \(name.utf8.count) bytes long, and a save writes a temporary file "
                    + "beside it whose name is 22 bytes longer, over the \(longest) its folder allows")
        }
    }

    /// Refuses, before any change, a store this user may not replace.
    func checkWritable() throws(StoreError) {
        let status = try inspect()
        switch try? POSIXFile.status(folder) {
        case .directory: break
        case nil: throw .folderUnreadable(path: path, folder: folder, reason: "permission denied")
        default: throw .folderMissing(path: path, folder: folder)
        }
        if let code = POSIXFile.access(folder, W_OK | X_OK) {
            throw .readOnly(
                path: path,
                reason: code == EROFS
                    ? "its file system is read-only" : "its folder \(folder) is not writable by this user")
        }
        if POSIXFile.access(folder, R_OK) != nil {
            throw .readOnly(
                path: path,
                reason: "its folder \(folder) cannot be read by this user, so a save could neither flush "
                    + "the folder to the disk nor remove a killed writer's temporary files")
        }
        guard case .file(let mode, let owner, _) = status else { return }
        if let links = POSIXFile.linkCount(path), links > 1 {
            throw .readOnly(
                path: path,
                reason: "it has \(links) names (hard links), and a save would replace it under this one "
                    + "only, leaving the others with the old content; use a symbolic link instead")
        }
        if let code = POSIXFile.access(path, W_OK) {
            throw .readOnly(
                path: path,
                reason: code == EROFS
                    ? "its file system is read-only"
                    : "the file is read-only for this user (mode \(String(mode, radix: 8)))")
        }
        let user = UInt32(geteuid())
        if user != 0 && owner != user {
            throw .readOnly(
                path: path,
                reason: "it belongs to another user (uid \(owner)), and a save would change its owner")
        }
    }

    private func read() throws(StoreError) -> StoredQueue? {
        try readBytes().map { bytes throws(StoreError) in try decode(bytes) }
    }

    private func decode(_ bytes: [UInt8]) throws(StoreError) -> StoredQueue {
        try StoredQueue.decode(Data(bytes), path: path)
    }

    /// The file's bytes, or `nil` when there is no file.
    private func readBytes() throws(StoreError) -> [UInt8]? {
        guard case .file = try inspect() else {
            // Nothing stored yet, but only where a store could be: a mistyped folder is an error.
            guard case .directory = try? POSIXFile.status(folder) else {
                throw .folderMissing(path: path, folder: folder)
            }
            return nil
        }
        let bytes: [UInt8]
        var swapped: POSIXFile.Status?  // what replaced the file since `inspect`, if not a file
        do throws(POSIXFile.Failure) {
            // Non-blocking, and checked once open: something put at the path since `inspect` (a
            // named pipe) neither hangs the open nor is read as a store.
            let descriptor = try POSIXFile.open(path, O_RDONLY | O_NONBLOCK)
            defer { close(descriptor) }
            var info = stat()
            if fstat(descriptor, &info) != 0 { throw POSIXFile.Failure(code: errno) }
            let found = POSIXFile.status(of: info)
            guard case .file = found else {
                swapped = found
                throw POSIXFile.Failure(code: EINVAL)
            }
            bytes = try POSIXFile.readAll(descriptor)
        } catch {
            switch swapped {
            case .directory?: throw .isDirectory(path: path)
            case .other(let kind)?: throw .notRegularFile(path: path, kind: kind)
            default: break
            }
            if error.code == ENOENT { return nil }
            throw .unreadable(path: path, reason: error.reason)
        }
        return bytes
    }

    /// Writes `queue` (see `save(_:)`) and returns the bytes written.
    private func write(_ queue: StoredQueue) throws(StoreError) -> [UInt8] {
        let existing = try inspect()
        let bytes: [UInt8]
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            bytes = Array(try encoder.encode(queue))
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        let name = URL(fileURLWithPath: path).lastPathComponent
        let temporary = folder + "/.\(name).\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).tmp"
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        /// The store's group, when this user may not give it to the new file.
        var refusedGroup: UInt32?
        do throws(POSIXFile.Failure) {
            // Private until it has the store's owner and mode (below): another user may not open
            // it meanwhile and read what is written after. A new store gets the default mode.
            let isNew = if case .missing = existing { true } else { false }
            let descriptor = try POSIXFile.open(
                temporary, O_WRONLY | O_CREAT | O_EXCL, mode: isNew ? 0o666 : 0o600)
            defer { close(descriptor) }
            if case .file(let mode, let owner, let group) = existing {
                // Owner first: changing the owner may clear mode bits. Only what differs from
                // what the new file got (its folder may have given it the store's group already,
                // which a user outside that group may keep).
                var made = stat()
                if fstat(descriptor, &made) != 0 { throw POSIXFile.Failure(code: errno) }
                if UInt32(made.st_uid) != owner || UInt32(made.st_gid) != group,
                    fchown(descriptor, uid_t(owner), gid_t(group)) != 0
                {
                    let code = errno
                    // The user's own store: a group the user is not in cannot be kept, and a save
                    // would change it; a file system without owners (it refuses every chown) is
                    // written as before. Another user's store (root saving it): always an error.
                    if owner == UInt32(geteuid()) {
                        if code == EPERM {
                            refusedGroup = group
                            throw POSIXFile.Failure(code: code)
                        }
                    } else {
                        throw POSIXFile.Failure(code: code)
                    }
                }
                if fchmod(descriptor, mode_t(mode)) != 0 { throw POSIXFile.Failure(code: errno) }
            }
            try POSIXFile.writeAll(descriptor, bytes)
            try POSIXFile.sync(descriptor)
        } catch {
            if let group = refusedGroup {
                throw .readOnly(
                    path: path,
                    reason: "its group (gid \(group)) is not one of this user's, and a save would change "
                        + "its group")
            }
            if error.code == ENOENT || error.code == ENOTDIR {
                throw .folderMissing(path: path, folder: folder)
            }
            throw .unwritable(path: path, reason: error.reason)
        }
        do {
            try beforeRename?()
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        guard rename(temporary, path) == 0 else {
            throw .unwritable(path: path, reason: POSIXFile.describe(errno))
        }
        renamed = true
        do throws(POSIXFile.Failure) {
            try POSIXFile.syncFolder(folder)
        } catch {
            throw .unwritable(
                path: path,
                reason: "the new content is in place, but flushing the folder failed: "
                    + error.reason)
        }
        return bytes
    }

    /// Deletes the temporary files of writers that were killed before their rename. Only
    /// called under the exclusive lock, when no other writer has one open. Only names this
    /// store's writers make (`.NAME.HEX.tmp`, see `write`) are touched: another store's (such as
    /// `NAME.bak`'s, `.NAME.bak.HEX.tmp`, under its own lock) and other programs' files are not.
    func removeStaleTemporaryFiles() {
        let prefix = ".\(URL(fileURLWithPath: path).lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where Self.isTemporaryName(name, prefix: prefix) {
            unlink(folder + "/" + name)
        }
    }

    /// Whether `name` is `prefix`, 1 to 16 lowercase hexadecimal digits, then `.tmp`: the name of
    /// a temporary file this store's `write` makes.
    static func isTemporaryName(_ name: String, prefix: String) -> Bool {
        // Byte for byte: `hasPrefix` compares canonically equivalent text as equal ("é" and
        // "e" + U+0301), which names two different files here.
        let suffix = ".tmp".utf8
        guard name.utf8.starts(with: prefix.utf8), name.utf8.reversed().starts(with: suffix.reversed()) else {
            return false
        }
        let digits = name.utf8.dropFirst(prefix.utf8.count).dropLast(4)
        return (1...16).contains(digits.count)
            && digits.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
