extension JSONFileQueueStore {
    /// Runs `body` while holding the store's lock: shared for `.read`, exclusive for `.write`.
    /// Every `load()` and `save(_:)` that `body` makes (directly or through a `QueueManager`)
    /// runs under this lock, so a load → change → save is one transaction: no other process
    /// writes in between.
    ///
    /// Before `body` runs, a `.write` transaction refuses a store this user may not change
    /// (`.readOnly`), so a refused command changes nothing, and deletes the temporary files
    /// that writers killed mid-save left behind. Nested transactions on the same store reuse
    /// the lock; a save inside a `.read` transaction is refused.
    ///
    /// Thread safety: safe from any thread and process. The lock belongs to the calling thread
    /// (or task); another thread's transaction on the same file waits for it. A task started in
    /// `body` uses the lock while the transaction runs; once it ended, the task's loads and
    /// saves lock for themselves.
    /// Callbacks: `body`, once, on the calling thread, with no in-process lock held.
    /// - Throws: a `StoreError` if the lock or the checks fail (`body` did not run), or what
    ///   `body` throws.
    /// - Complexity: O(1) plus `body`; waits up to `lockTimeout` seconds for the lock.
    public func transaction<Result>(_ access: StoreAccess, _ body: () throws -> Result) throws -> Result {
        let lockPath = lockURL.path
        let held = HeldStoreLocks.held
        if let current = held[lockPath], current.isHeld {
            guard current.access == .write || access == .read else {
                throw StoreError.unwritable(path: path, reason: "a read transaction cannot save")
            }
            return try body()
        }
        _ = try inspect()
        if access == .write { try checkNameFits() }
        let lock = try StoreLock.acquire(
            access, lockPath: lockPath, storePath: path, folder: folder, timeout: lockTimeout)
        defer { lock.release() }
        if access == .write {
            try checkWritable()
            removeStaleTemporaryFiles()
        }
        let hold = HeldStoreLock(access)
        defer { hold.end() }  // before the lock is released (the defer above runs after)
        var extended = held
        extended[lockPath] = hold
        return try HeldStoreLocks.$held.withValue(extended) { try body() }
    }

    /// `transaction` for the store's own typed-throwing `load` and `save`.
    func locked<Result>(
        _ access: StoreAccess, _ body: () throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        do {
            return try transaction(access) { () throws -> Result in try body() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
    }
}
