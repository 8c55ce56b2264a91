// Command-line options of the benchmark executable. `Benchmarks/run` passes them; see
// `--help`.

enum RunMode: String, Sendable {
    /// The full run: the sizes and sample counts the targets are judged on.
    case full
    /// A few samples at small sizes, for CI: checks that every scenario builds, runs and
    /// delivers what it should. Its numbers are not meant to be compared.
    case smoke
}

struct Options {
    var mode = RunMode.full
    /// Where to write the JSON results; nothing is written without it.
    var jsonPath: String?
    /// Scenario families to run (all when nil).
    var only: Set<String>?
    /// Free-form facts recorded in the JSON (toolchain, commit), passed as key=value.
    var metadata: [String: String] = [:]
    var listOnly = false

    static let usage = """
        usage: ObserverGraphBenchmarks [--smoke | --quick] [--json PATH] [--only a,b] [--meta key=value]... [--list]
          --smoke, --quick   few samples at small sizes (CI); numbers not comparable
          --json PATH        write the results as JSON to PATH
          --only a,b         run only these scenario families (see --list)
          --meta key=value   record a fact in the JSON (for example toolchain=..., commit=...)
          --list             list the scenario families, including the planned ones, and exit
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(after flag: String) -> String {
            guard let next = rest.popFirst() else { fail("\(flag) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--smoke", "--quick": options.mode = .smoke
            case "--full": options.mode = .full
            case "--json": options.jsonPath = value(after: argument)
            case "--only":
                let names = value(after: argument).split(separator: ",").map(String.init)
                options.only = Set(names)
            case "--meta":
                let pair = value(after: argument)
                guard let equals = pair.firstIndex(of: "=") else {
                    fail("--meta wants key=value, got \(pair)")
                }
                options.metadata[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            case "--list": options.listOnly = true
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        return options
    }

    private static func fail(_ message: String) -> Never {
        print("error: \(message)\n\(usage)")
        exit(2)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
