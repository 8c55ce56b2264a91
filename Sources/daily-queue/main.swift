import Foundation
import ObserverGraph

// A write past a file-size limit fails with an error the store reports (its previous content
// kept), instead of killing the process.
signal(SIGXFSZ, SIG_IGN)
// A reader that went away (a pipe closed early) makes a write fail with an error, reported by
// the exit status, instead of killing the process after the command may have saved its change.
signal(SIGPIPE, SIG_IGN)

/// Whether standard output was closed when the program started. Closed standard descriptors
/// are opened on /dev/null first, so that no file this program opens (the store's lock, its
/// temporary file) takes their numbers and receives what is printed; a line for a closed
/// standard output is lost output (exit status 6), as a failed write is.
let standardOutputClosed: Bool = {
    var closed = false
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
        if descriptor == STDOUT_FILENO { closed = true }
        _ = open("/dev/null", O_RDWR)  // the lowest free number: this one
    }
    return closed
}()

/// Writes `line` and a newline to `descriptor`, unbuffered (so that notifications appear live
/// even when standard output is a pipe); `false` when it could not (a closed pipe, a full disk).
func writeLine(_ line: String, to descriptor: Int32) -> Bool {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if count < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += count
    }
    return true
}

// daily-queue: the command-line face of the DailyQueue reference app. A line that cannot be
// written to standard output turns a success into exit status 6 (the command itself took
// effect); one that cannot be written to standard error is lost (there is nowhere to say so).
let outputLost = GraphLock(false)
let tool = Tool(
    out: { line in
        if standardOutputClosed || !writeLine(line, to: STDOUT_FILENO) { outputLost.withLock { $0 = true } }
    },
    err: { line in _ = writeLine(line, to: STDERR_FILENO) },
    interactive: isatty(0) == 1)
let status = tool.run(Array(CommandLine.arguments.dropFirst()))
if status == ExitCode.success && outputLost.withLock({ $0 }) {
    _ = writeLine(
        "daily-queue: the output could not be written (the command itself took effect)", to: STDERR_FILENO)
    exit(ExitCode.output)
}
exit(status)
