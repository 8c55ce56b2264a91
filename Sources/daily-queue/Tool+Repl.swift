import DailyQueue
import Foundation

extension Tool {
    /// Reads commands line by line, printing notifications as the observers receive them.
    /// Each line is its own transaction: the store is re-read under its lock first, so repls
    /// and commands running at the same time never overwrite each other.
    func repl(_ store: JSONFileQueueStore) throws -> Int32 {
        // A store that cannot be used ends the repl before it reads any input.
        _ = try store.load()
        var failures = 0
        if interactive {
            out("daily-queue repl on \(store.url.path): type `help`, or `quit` to end.")
        }
        while true {
            if interactive { out("> ") }
            guard let line = readLine() else { break }
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
