import Foundation

// A write past a file-size limit fails with an error the store reports (its previous content
// kept), instead of killing the process.
signal(SIGXFSZ, SIG_IGN)

// daily-queue: the command-line face of the DailyQueue reference app. Output is written
// unbuffered, so that notifications appear live even when standard output is a pipe.
let tool = Tool(
    out: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) },
    err: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
    interactive: isatty(0) == 1)
exit(tool.run(Array(CommandLine.arguments.dropFirst())))
