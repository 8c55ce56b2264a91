#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few system calls the file store needs, with `errno` turned into text. Internal: the
/// store's public face speaks `StoreError`.
enum POSIXFile {
    /// What `stat` found at a path.
    enum Status {
        /// Nothing is there.
        case missing
        /// A regular file: its permission bits and owner.
        case file(mode: UInt32, owner: UInt32, group: UInt32)
        /// A directory.
        case directory
        /// Something else ("a named pipe", "a device", ...).
        case other(kind: String)
    }

    /// A failed call: the `errno` and its text.
    struct Failure: Error {
        let code: Int32
        var reason: String { POSIXFile.describe(code) }
    }

    /// `stat(path)` (following symbolic links).
    static func status(_ path: String) throws(Failure) -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return .missing }
            throw Failure(code: code)
        }
        return status(of: info)
    }

    /// What `info` (from `stat` or `fstat`) describes.
    static func status(of info: stat) -> Status {
        let type = UInt32(info.st_mode) & UInt32(S_IFMT)
        switch type {
        case UInt32(S_IFREG):
            return .file(
                mode: UInt32(info.st_mode) & 0o7777, owner: UInt32(info.st_uid), group: UInt32(info.st_gid))
        case UInt32(S_IFDIR): return .directory
        case UInt32(S_IFIFO): return .other(kind: "a named pipe")
        case UInt32(S_IFCHR), UInt32(S_IFBLK): return .other(kind: "a device")
        case UInt32(S_IFSOCK): return .other(kind: "a socket")
        default: return .other(kind: "a special file")
        }
    }

    /// The file a symbolic link at `path` leads to, or `nil` when `path` is not a link. A link
    /// to a file that does not exist (yet: a store before its first save) leads to that file's
    /// path, so that a save creates it there, or is refused when its folder is missing, and the
    /// link stays a link.
    static func linkTarget(_ path: String) -> String? {
        guard isLink(path) else { return nil }
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // Dangling: followed one link at a time, at most 40 (the system's own limit); a longer
        // chain (a loop) ends on a link, which `stat` then reports.
        var current = path
        for _ in 0..<40 {
            guard isLink(current), let target = readLink(current) else { return current }
            if target.hasPrefix("/") {
                current = target
            } else if let slash = current.lastIndex(of: "/") {
                current = String(current[...slash]) + target
            } else {
                current = target
            }
        }
        return current
    }

    /// Whether `path` itself is a symbolic link.
    private static func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFLNK)
    }

    /// What the symbolic link at `path` contains, or `nil`.
    private static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4097)
        let count = buffer.withUnsafeMutableBytes {
            readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count - 1)
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// How many names (hard links) the file at `path` has, or `nil` when it cannot be read.
    static func linkCount(_ path: String) -> UInt? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt(info.st_nlink)
    }

    /// The longest file name the folder at `path` allows, in bytes (255 when the system does
    /// not say).
    static func longestName(in path: String) -> Int {
        let longest = pathconf(path, Int32(_PC_NAME_MAX))
        return longest > 0 ? Int(longest) : 255
    }

    /// Whether this process may access `path` in `mode` (`R_OK`, `W_OK`, `X_OK`); the `errno`
    /// otherwise.
    static func access(_ path: String, _ mode: Int32) -> Int32? {
        #if canImport(Darwin)
            let result = Darwin.access(path, mode)
        #elseif canImport(Musl)
            let result = Musl.access(path, mode)
        #else
            let result = Glibc.access(path, mode)
        #endif
        return result == 0 ? nil : errno
    }

    /// `open(path, flags, mode)` (`mode`, for a file it creates, before the umask), with
    /// `O_CLOEXEC`, retried on `EINTR`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o666) throws(Failure) -> Int32 {
        while true {
            #if canImport(Darwin)
                let descriptor = Darwin.open(path, flags | O_CLOEXEC, mode)
            #elseif canImport(Musl)
                let descriptor = Musl.open(path, flags | O_CLOEXEC, mode)
            #else
                let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            #endif
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw Failure(code: errno) }
        }
    }

    /// Reads everything from `descriptor`.
    static func readAll(_ descriptor: Int32) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes all of `bytes` to `descriptor` (a short write is continued; a full disk fails).
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            offset += count
        }
    }

    /// Flushes `descriptor` to the disk.
    static func sync(_ descriptor: Int32) throws(Failure) {
        while fsync(descriptor) != 0 {
            if errno != EINTR { throw Failure(code: errno) }
        }
    }

    /// Flushes a folder's entries (a rename in it) to the disk; file systems that cannot
    /// sync a folder are not an error. A folder that cannot be opened is (the store refuses a
    /// folder this user cannot read before any change, see `checkWritable`).
    static func syncFolder(_ path: String) throws(Failure) {
        let descriptor = try open(path, O_RDONLY)
        defer { close(descriptor) }
        while fsync(descriptor) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EINVAL || code == EROFS || code == EBADF { return }
            throw Failure(code: code)
        }
    }

    /// `errno` as a short text: "permission denied".
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        let message = String(cString: text)
        guard let first = message.first else { return "error \(code)" }
        return first.lowercased() + message.dropFirst()
    }
}
