import DailyQueue
import Foundation
import ObserverGraph
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `daily-queue` executable, as a person would. Every run has a deadline: a
/// process still running then is killed and the test fails (a hang never stalls the suite).
struct DailyQueueCommand {
    /// The executable next to the test bundle (SwiftPM builds it because the tests depend on it).
    static let executable: URL? = {
        var folder = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("daily-queue")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }()

    struct MissingExecutable: Error, CustomStringConvertible {
        var description: String { "the daily-queue executable was not found next to the tests" }
    }

    struct Result {
        let status: Int32
        let out: String
        let err: String
    }

    /// Runs `daily-queue ARGUMENTS`, feeding `input` on standard input; `environment` is added
    /// to the test's; `launcher` (such as `setpriv ...`) runs the executable.
    static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:],
        launcher: [String] = [], timeout: Double = 60
    ) throws -> Result {
        let running = try Spawned(arguments, environment: environment, launcher: launcher)
        if let input {
            // A process may stop reading before the end of its input (the repl's line limit):
            // the rest cannot be written, which is an error here, not this process's end.
            ignoreBrokenPipes
            try? running.stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        }
        try running.stdin.fileHandleForWriting.close()
        return running.finish(timeout: timeout)
    }
}

/// Set once: a write to a pipe whose reader is gone fails with `EPIPE` instead of ending the
/// test process with `SIGPIPE`.
private let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

/// A suite whose tests each run the tool on one store, `queue.json`, in a folder of their own.
protocol OneStoreSuite {
    var folder: URL { get }
    var store: String { get }
}

extension OneStoreSuite {
    /// A new folder, and the path of the store in it (not made yet).
    static func scratch() throws -> (folder: URL, store: String) {
        let folder = try temporaryFolder()
        return (folder, folder.appendingPathComponent("queue.json").path)
    }

    /// The titles of every item stored at `path` (default: the suite's store), in creation
    /// order; `nil` when nothing is stored there.
    func titles(_ path: String? = nil) throws -> [String]? {
        try JSONFileQueueStore(url: URL(fileURLWithPath: path ?? store)).load()?.items.map(\.title)
    }

    /// `daily-queue ARGUMENTS --store STORE`, started by `launcher` (see `DailyQueueCommand.run`).
    func run(_ arguments: String..., launcher: [String] = []) throws -> DailyQueueCommand.Result {
        try DailyQueueCommand.run(arguments + ["--store", store], launcher: launcher)
    }
}

/// A `daily-queue` process that was started and not yet waited for.
final class Spawned {
    let process = Process()
    let stdin = Pipe()
    private let out = Pipe()
    private let err = Pipe()
    private let output = GraphLock("")
    private let drained = GraphLock(false)

    init(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = []) throws {
        guard let executable = DailyQueueCommand.executable else {
            throw DailyQueueCommand.MissingExecutable()
        }
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        // Not the package's folder: a store a bug would put in the current folder lands here.
        process.currentDirectoryURL = FileManager.default.temporaryDirectory
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        // Standard output is drained as it comes, so tests can wait for a line.
        let (output, drained, reader) = (self.output, self.drained, out.fileHandleForReading)
        Thread.detachNewThread {
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                output.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            drained.withLock { $0 = true }
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// What the process printed on standard output so far.
    var outputSoFar: String { output.withLock { $0 } }

    /// Sends one line to the process's standard input.
    func send(_ line: String) {
        stdin.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits until standard output contains `text`; false (and a recorded issue) at the deadline.
    @discardableResult
    func waitForOutput(containing text: String, timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !outputSoFar.contains(text) {
            guard Date() < deadline else {
                Issue.record("no \"\(text)\" in the output within \(timeout) s; got:\n\(outputSoFar)")
                return false
            }
            usleep(2_000)
        }
        return true
    }

    /// Waits for the process to end (killing it at the deadline, which fails the test) and
    /// returns its status and output.
    func finish(timeout: Double = 60) -> DailyQueueCommand.Result {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() >= deadline {
                kill(pid, SIGKILL)
                Issue.record("daily-queue \(process.arguments ?? []) did not end within \(timeout) s; killed")
                break
            }
            usleep(1_000)
        }
        process.waitUntilExit()
        try? stdin.fileHandleForWriting.close()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        // The readability handler drains standard output; wait for it to see the end.
        let drained = Date().addingTimeInterval(5)
        while !self.drained.withLock({ $0 }) && Date() < drained { usleep(1_000) }
        return DailyQueueCommand.Result(
            status: process.terminationStatus, out: outputSoFar, err: String(decoding: errData, as: UTF8.self)
        )
    }
}
