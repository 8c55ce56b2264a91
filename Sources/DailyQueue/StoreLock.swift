import ObserverGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a transaction uses a store: `read` takes the shared lock (any number of readers at
/// once), `write` the exclusive one (one writer, no reader).
public enum StoreAccess: Sendable, Equatable {
    /// Load only.
    case read
    /// Load, change and save.
    case write
}

/// An advisory `flock` on the lock file beside a store. The kernel releases it when the
/// process ends, however it ends (`kill -9` included), so a lock is never left stale.
struct StoreLock {
    /// The lock file's descriptor; `nil` for a reader that found no lock file (a reader does not
    /// make one: no writer is saving then, and one that starts makes it and replaces the store
    /// in one rename, so a reader never sees half a file) or one it cannot use.
    private let descriptor: Int32?

    /// Takes the lock, waiting at most `timeout` seconds.
    /// - Throws: `.busy` when the wait ran out; `.readOnly`, `.folderMissing` or `.unwritable`
    ///   when a writer cannot make the lock file.
    static func acquire(
        _ access: StoreAccess, lockPath: String, storePath: String, folder: String, timeout: Double
    ) throws(StoreError) -> StoreLock {
        let descriptor: Int32
        do throws(POSIXFile.Failure) {
            // Non-blocking, so that a named pipe at the lock's path does not hang the open. Only
            // a writer makes the file: `list` of a store that does not exist leaves nothing.
            let create = access == .write ? O_CREAT : 0
            descriptor = try POSIXFile.open(lockPath, O_RDONLY | create | O_NONBLOCK)
        } catch {
            if access == .read { return StoreLock(descriptor: nil) }
            switch error.code {
            case EACCES, EPERM:
                // The lock file is there, but this user may not open it (another user made it).
                if case .file(let mode, let owner, _)? = try? POSIXFile.status(lockPath) {
                    throw .readOnly(
                        path: storePath,
                        reason: "its lock file \(lockPath) belongs to uid \(owner) with mode "
                            + "\(String(mode, radix: 8)), which this user may not open; give it to the "
                            + "store's owner, or delete it while no daily-queue runs")
                }
                throw .readOnly(path: storePath, reason: "its folder \(folder) is not writable by this user")
            case EROFS: throw .readOnly(path: storePath, reason: "its file system is read-only")
            case ENOENT, ENOTDIR: throw .folderMissing(path: storePath, folder: folder)
            default: throw .unwritable(path: storePath, reason: "cannot open \(lockPath): \(error.reason)")
            }
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else {
            close(descriptor)
            // Something else is there: no writer can lock it, so a reader reads unlocked.
            if access == .read { return StoreLock(descriptor: nil) }
            throw .unwritable(path: storePath, reason: "its lock file \(lockPath) is not a regular file")
        }
        // Root saving another user's store gives the store back to its owner (see
        // `JSONFileQueueStore.write`): so it does with the lock file, which root's umask may
        // have made unreadable to that user, who could then never lock the store again.
        if access == .write, geteuid() == 0, info.st_uid == 0,
            case .file(_, let owner, let group)? = try? POSIXFile.status(storePath), owner != 0
        {
            _ = fchown(descriptor, uid_t(owner), gid_t(group))
        }
        let operation = access == .write ? LOCK_EX : LOCK_SH
        let start = now()
        var pause = 0.001
        while flock(descriptor, operation | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK || code == EAGAIN else {
                close(descriptor)
                if access == .read { return StoreLock(descriptor: nil) }
                throw .unwritable(
                    path: storePath, reason: "cannot lock \(lockPath): \(POSIXFile.describe(code))")
            }
            let waited = now() - start
            guard waited < timeout else {
                close(descriptor)
                throw .busy(path: storePath, waited: timeout)
            }
            // Polling with a growing, jittered pause: a bounded wait without signals or threads.
            let sleep = min(pause * Double.random(in: 0.5...1.5), timeout - waited)
            usleep(UInt32(max(sleep, 0.0005) * 1_000_000))
            pause = min(pause * 2, 0.02)
        }
        return StoreLock(descriptor: descriptor)
    }

    /// Releases the lock (closing the file releases it too).
    func release() {
        guard let descriptor else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Seconds on a monotonic clock.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The store locks the current thread (or task) holds, so that a save inside a transaction
/// does not try to lock again.
///
/// A task started inside a transaction (`Task { ... }`) inherits these task-local values and may
/// run after the transaction ended: each entry says whether its transaction is still running,
/// and one that ended counts for nothing (the task's save takes the lock itself).
enum HeldStoreLocks {
    @TaskLocal static var held: [String: HeldStoreLock] = [:]
}

/// One transaction's hold on a store's lock (see `HeldStoreLocks`).
final class HeldStoreLock: Sendable {
    let access: StoreAccess
    private let running = GraphLock(true)

    init(_ access: StoreAccess) {
        self.access = access
    }

    /// Whether the transaction still holds the lock.
    var isHeld: Bool { running.withLock { $0 } }

    /// The transaction released the lock.
    func end() { running.withLock { $0 = false } }
}
