// Fuzz target: the reference app's store decoder, through its public entry point
// (`JSONFileQueueStore.load()` on a file holding the fuzzer's bytes).
//
// Property: loading never crashes or hangs. It returns a queue or throws a `StoreError`, and
// never `nil` for a file that exists. A queue that loads saves (to another file) and loads back
// equal: whatever the decoder accepts, the app can write again.
import DailyQueue
import Foundation

/// This process's scratch folder (made once); the fuzzer runs inputs one at a time.
let scratch: URL = {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("observergraph-store-fuzz-\(getpid())", isDirectory: true)
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
        fatalError("fuzz harness: cannot make its scratch folder: \(error)")
    }
    return folder
}()
let input = scratch.appendingPathComponent("input.json")
let copy = scratch.appendingPathComponent("copy.json")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStore(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try Data(bytes: data, count: size).write(to: input)
    } catch {
        fatalError("fuzz harness: cannot write its scratch file: \(error)")
    }
    let loaded: StoredQueue?
    do {
        loaded = try JSONFileQueueStore(url: input).load()
    } catch {
        return 0  // refused with a typed error: fine
    }
    guard let queue = loaded else { fatalError("load() returned nil for a file that exists") }
    let store = JSONFileQueueStore(url: copy)
    do {
        try store.save(queue)
        guard try store.load() == queue else {
            fatalError("a loaded queue does not survive save and load: \(queue)")
        }
    } catch {
        fatalError("a loaded queue cannot be saved and loaded again: \(error)\n\(queue)")
    }
    return 0
}
