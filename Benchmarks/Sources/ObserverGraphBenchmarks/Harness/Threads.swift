// Runs work on several threads that start together, for the contention scenario.

import Foundation

/// Runs `body(0)`, ..., `body(threads - 1)`, each on its own new thread, and returns the
/// nanoseconds from the moment all threads were released until the last one finished. Thread
/// creation is not timed: every thread first reports ready and waits for the start signal.
func timeOnThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> UInt64 {
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for index in 0..<threads {
        finished.enter()
        let thread = Thread {
            ready.signal()
            start.wait()
            body(index)
            finished.leave()
        }
        thread.start()
    }
    for _ in 0..<threads { ready.wait() }
    let begin = monotonicNanoseconds()
    for _ in 0..<threads { start.signal() }
    finished.wait()
    return monotonicNanoseconds() - begin
}
