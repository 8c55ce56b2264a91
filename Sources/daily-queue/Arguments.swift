/// A command line split into words and `--options`, with no dependency: options may come before
/// or after the arguments, and `--` ends the options (every word after it is an argument, so
/// `add -- --done` adds a title "--done"). An option with a value may be given once: a second
/// `--day` or `--store` is refused, not silently chosen over the first; an option without one
/// (`--done=yes`) is refused, not read as `--done`.
struct Arguments {
    /// The words that are not options, in order.
    private(set) var words: [String]
    /// Options with a value (`--store PATH`, `--day DAY`).
    private(set) var values: [String: String]
    /// Options without a value (`--done`, `--all`, `--help`).
    private(set) var flags: Set<String>
    /// Options without a value that were given one (`--done=yes`), refused by `allow`.
    private var flagsGivenValues: [String] = []

    /// Options that take a value; every other `--option` is a flag.
    static let valued: Set<String> = ["--store", "--day"]

    init(_ raw: [String]) throws(UsageError) {
        var words: [String] = []
        var values: [String: String] = [:]
        var flags = Set<String>()
        var flagsGivenValues: [String] = []
        var index = 0
        var optionsEnded = false
        while index < raw.count {
            let word = raw[index]
            index += 1
            if optionsEnded {
                words.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word == "-h" {
                flags.insert("--help")
            } else if word.hasPrefix("--") {
                if let equals = word.firstIndex(of: "=") {
                    let name = String(word[..<equals])
                    guard Self.valued.contains(name) else {
                        // Refused by `allow`, once it knows whether the command has this flag.
                        flags.insert(name)
                        flagsGivenValues.append(name)
                        continue
                    }
                    guard values[name] == nil else { throw UsageError("\(name) is given twice") }
                    values[name] = String(word[word.index(after: equals)...])
                } else if Self.valued.contains(word) {
                    guard index < raw.count, !raw[index].hasPrefix("--") else {
                        throw UsageError("\(word) needs a value")
                    }
                    guard values[word] == nil else { throw UsageError("\(word) is given twice") }
                    values[word] = raw[index]
                    index += 1
                } else {
                    flags.insert(word)
                }
            } else {
                words.append(word)
            }
        }
        self.words = words
        self.values = values
        self.flags = flags
        self.flagsGivenValues = flagsGivenValues
    }

    /// Removes and returns the first word (the command).
    mutating func popCommand() -> String? {
        words.isEmpty ? nil : words.removeFirst()
    }

    /// Fails unless exactly `count` words are left; `names` name them in the message.
    func expect(_ names: String..., command: String) throws(UsageError) {
        guard words.count == names.count else {
            let usage = names.map { "<\($0)>" }.joined(separator: " ")
            throw UsageError(
                "\(command) takes \(names.isEmpty ? "no arguments" : usage), got \(words.count) argument(s)")
        }
    }

    /// Fails if an option not in `allowed` was given.
    func allow(_ allowed: Set<String>, command: String) throws(UsageError) {
        let given = Set(values.keys).union(flags).subtracting(["--help", "--store"])
        if let unknown = given.subtracting(allowed).sorted().first {
            throw UsageError("\(command) does not take \(unknown)")
        }
        if let flag = flagsGivenValues.first { throw UsageError("\(flag) does not take a value") }
    }
}

/// A mistake in how the tool was called (exit code 2).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
