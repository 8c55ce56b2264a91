/// Why a store could not load or save. Nothing was lost or overwritten.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file exists but cannot be read.
    case unreadable(path: String, reason: String)
    /// The file is not a valid queue file, or its content is inconsistent (duplicate ids,
    /// positions that are not 1...n, a `nextID` not above every id). It is left untouched.
    case corrupt(path: String, reason: String)
    /// The file was written by a newer version of the app.
    case newerFormat(path: String, found: Int, supported: Int)
    /// The file could not be written (the old file, if any, is intact).
    case unwritable(path: String, reason: String)
    /// Another process held the store's lock for the whole wait; nothing was read or changed.
    case busy(path: String, waited: Double)
    /// The path names a directory, not a file.
    case isDirectory(path: String)
    /// The path names something that is not a regular file (`kind`: "a named pipe", ...).
    case notRegularFile(path: String, kind: String)
    /// The folder that holds the store cannot be searched or opened by this user.
    case folderUnreadable(path: String, folder: String, reason: String)
    /// The folder that should hold the store does not exist or is not a folder.
    case folderMissing(path: String, folder: String)
    /// The store may be read but not changed by this user (`reason` says why); refused
    /// before any change.
    case readOnly(path: String, reason: String)
    /// Another process, or another manager, saved the store since this one read or last saved
    /// it: nothing was written (overwriting would lose that save). Read the store again.
    case changedElsewhere(path: String)

    /// What kind of failure this is; the command line maps each to its own exit code.
    public enum Category: Sendable, Equatable {
        /// Another process holds the store, or changed it since it was read.
        case busy
        /// The store is not something this app can use (corrupt, inconsistent, a directory...).
        case invalid
        /// Reading or writing failed (permissions, a missing folder, a full disk).
        case io
    }

    /// The kind of failure.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var category: Category {
        switch self {
        case .busy, .changedElsewhere: .busy
        case .corrupt, .newerFormat, .isDirectory, .notRegularFile: .invalid
        case .unreadable, .unwritable, .folderUnreadable, .folderMissing, .readOnly: .io
        }
    }

    /// The message shown to people.
    ///
    /// Thread safety: a value. Callbacks: none.
    /// - Complexity: O(1).
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the store \(path): \(reason)"
        case .corrupt(let path, let reason): "the store \(path) is corrupt (\(reason)); it was left untouched"
        case .newerFormat(let path, let found, let supported):
            "the store \(path) has format version \(found), but this daily-queue supports up to \(supported); "
                + "use a newer daily-queue"
        case .unwritable(let path, let reason): "cannot write the store \(path): \(reason)"
        case .busy(let path, let waited):
            "the store \(path) is busy: another daily-queue held its lock for \(Self.seconds(waited)); "
                + "nothing was changed, try again"
        case .isDirectory(let path):
            "the store \(path) is a directory; give the path of a file, such as \(path)/queue.json"
        case .notRegularFile(let path, let kind):
            "the store \(path) is \(kind), not a regular file; nothing was read or written"
        case .folderUnreadable(let path, let folder, let reason):
            "cannot open the folder \(folder) of the store \(path): \(reason)"
        case .folderMissing(let path, let folder):
            "the folder \(folder) of the store \(path) does not exist or is not a folder; create it first"
        case .readOnly(let path, let reason):
            "the store \(path) cannot be changed: \(reason); nothing was changed"
        case .changedElsewhere(let path):
            "the store \(path) was saved by someone else since this queue was read; nothing was saved, "
                + "read it again"
        }
    }

    private static func seconds(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }
}
