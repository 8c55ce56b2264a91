import DailyQueue

/// The tool's exit statuses, as `--help` documents them.
enum ExitCode {
    /// The command did what it was asked.
    static let success: Int32 = 0
    /// The command was refused (no such item, a bad title or position); nothing changed.
    static let failed: Int32 = 1
    /// The command line is wrong.
    static let usage: Int32 = 2
    /// Another process held the store's lock for the whole wait.
    static let busy: Int32 = 3
    /// The store is corrupt, inconsistent, of a newer format, or not a regular file.
    static let invalidStore: Int32 = 4
    /// The store or its folder cannot be read, or may not be written, or the disk is full.
    static let io: Int32 = 5
    /// The command did what it was asked, but its output could not be written (a closed pipe,
    /// a full disk).
    static let output: Int32 = 6

    /// The status for an error a command threw.
    static func of(_ error: any Error) -> Int32 {
        let storeError: StoreError? =
            switch error {
            case let error as StoreError: error
            case QueueError.store(let error): error
            default: nil
            }
        switch storeError?.category {
        case nil: return failed
        case .busy: return busy
        case .invalid: return invalidStore
        case .io: return io
        }
    }
}
