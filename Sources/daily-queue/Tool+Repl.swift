import DailyQueue
import Foundation

extension Tool {
    /// Reads commands line by line, printing notifications as the observers receive them.
    /// Each line is its own transaction: the store is re-read under its lock first, so repls
    /// and commands running at the same time never overwrite each other. A line longer than
    /// `InputLines.longest` bytes (input that is not commands, such as `/dev/zero`) ends the repl
    /// with a failure, before it holds more than that in memory.
    func repl(_ store: JSONFileQueueStore) throws -> Int32 {
        // A store that cannot be used ends the repl before it reads any input.
        _ = try store.load()
        var failures = 0
        var input = InputLines(descriptor: STDIN_FILENO)
        if interactive {
            out("daily-queue repl on \(store.url.path): type `help`, or `quit` to end.")
        }
        while true {
            if interactive { out("> ") }
            let line: String
            switch input.next() {
            case .line(let text): line = text
            case .tooLong(let number):
                let longest = InputLines.longest
                err("daily-queue: line \(number) is longer than \(longest) bytes; the repl stops there")
                return ExitCode.failed
            case .failed(let reason):
                err("daily-queue: cannot read the input: \(reason)")
                return ExitCode.failed
            case .end: return failures == 0 ? ExitCode.success : ExitCode.failed
            }
            let words: [String]
            do {
                words = try Self.split(line)
            } catch {
                err("daily-queue: \(error)")
                failures += 1
                continue
            }
            guard let command = words.first else { continue }
            if command == "quit" || command == "exit" { break }
            do {
                var arguments = try Arguments(words)
                _ = arguments.popCommand()
                if command == "help" || arguments.flags.contains("--help") {
                    let topic = command == "help" ? arguments.words.first : command
                    out(topic.map { Help.text(for: $0) ?? "unknown command \($0)" } ?? Help.replOverview)
                    continue
                }
                guard Help.commands.contains(where: { $0.0 == command }), !["demo", "repl"].contains(command)
                else {
                    throw UsageError("unknown command \(command) in the repl (type help)")
                }
                guard arguments.values["--store"] == nil else {
                    throw UsageError("--store cannot change inside the repl")
                }
                try execute(command, arguments, in: store)
            } catch {
                err("daily-queue: \(error)")
                failures += 1
            }
        }
        return failures == 0 ? ExitCode.success : ExitCode.failed
    }

    /// Splits a repl line into words; double or single quotes group words.
    static func split(_ line: String) throws(UsageError) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " || character == "\t" {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if quote != nil { throw UsageError("unclosed quote in: \(line)") }
        if inWord { words.append(current) }
        return words
    }
}

/// The lines of a file descriptor, each at most `longest` bytes: `readLine()` would gather a line
/// without end from input with no line break. A line ends at "\n" (a "\r" before it is dropped,
/// and not counted) or at the end of the input; bytes that are not UTF-8 are read as "�".
struct InputLines {
    /// The longest line read, in bytes: 64 KiB.
    static let longest = 65_536

    /// What `next()` found.
    enum Line {
        /// The next line, without its line break.
        case line(String)
        /// Line `number` (from 1) is longer than `longest`: nothing after it is read.
        case tooLong(number: Int)
        /// Reading failed (`reason` says why).
        case failed(reason: String)
        /// The input ended.
        case end
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` begin.
    private var start = 0
    private var ended = false
    private var number = 0

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next line (see `Line`).
    mutating func next() -> Line {
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                number += 1
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                guard end - start <= Self.longest else { return .tooLong(number: number) }
                let text = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                return .line(text)
            }
            // One byte more than a line may hold: its "\r", if the "\n" comes next.
            guard buffer.count - start <= Self.longest + 1 else { return .tooLong(number: number + 1) }
            if ended {
                guard start < buffer.count else { return .end }
                number += 1
                guard buffer.count - start <= Self.longest else { return .tooLong(number: number) }
                let text = String(decoding: buffer[start...], as: UTF8.self)
                start = buffer.count
                return .line(text)
            }
            // Moves the unread bytes to the front, then reads more behind them.
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            searched = buffer.count
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(reason: String(cString: strerror(errno)))
            }
            if count == 0 { ended = true } else { buffer.append(contentsOf: chunk[0..<count]) }
        }
    }
}
