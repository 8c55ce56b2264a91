import Foundation
import Testing

// What the kit cannot honour is a compile error. A conformance to GraphObserver isolated to an
// actor would be invisible to the kit off that actor, so the compiler must refuse it. These tests
// run the compiler on the drop-in core file plus a snippet.

/// Type-checks the core file together with `snippet`; returns the compiler's exit code and output.
private func typecheckWithCore(_ snippet: String) throws -> (status: Int32, output: String) {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let core = root.appendingPathComponent("Sources/ObserverGraph/ObserverGraph.swift")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("og-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("Snippet.swift")
    try snippet.write(to: file, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "swiftc", "-swift-version", "6", "-parse-as-library", "-typecheck", core.path, file.path,
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, output)
}

@Suite("Isolation: what the kit cannot honour does not compile", .timeLimit(.minutes(3)))
struct IsolatedConformanceCompileTests {
    @Test(
        "A main-actor-isolated conformance to GraphObserver is a compile error; the nonisolated one compiles")
    func isolatedConformanceIsRefused() throws {
        let refused = try typecheckWithCore(
            """
            protocol CreditsMessages { func creditsChanged(to credits: Int) }
            @MainActor final class ViewModel: @MainActor GraphObserver, @MainActor CreditsMessages {
                var text = ""
                func creditsChanged(to credits: Int) { text = "\\(credits)" }
            }
            """)
        #expect(refused.status != 0)
        #expect(refused.output.contains("cannot form main actor-isolated conformance"))
        #expect(refused.output.contains("GraphObserver"))

        // The pattern that works: a nonisolated conformance to the kit's protocol, an isolated
        // one to the app's message protocol. The same snippet otherwise, so the refusal above is
        // about the isolation and nothing else.
        let accepted = try typecheckWithCore(
            """
            protocol CreditsMessages { func creditsChanged(to credits: Int) }
            @MainActor final class ViewModel: GraphObserver, @MainActor CreditsMessages {
                var text = ""
                func creditsChanged(to credits: Int) { text = "\\(credits)" }
            }
            """)
        #expect(accepted.status == 0, "\(accepted.output)")
    }

    @Test("An isolated conformance to GraphObservable or GraphTrackingObserver is a compile error too")
    func isolatedObservableAndTrackerAreRefused() throws {
        let observable = try typecheckWithCore(
            """
            @MainActor final class Store: @MainActor GraphObservable { let graphNode = GraphNode() }
            """)
        #expect(observable.status != 0)
        #expect(observable.output.contains("cannot form main actor-isolated conformance"))
        let tracker = try typecheckWithCore(
            """
            @MainActor final class Screen: @MainActor GraphTrackingObserver { let graphNode = GraphNode() }
            """)
        #expect(tracker.status != 0)
        #expect(tracker.output.contains("cannot form main actor-isolated conformance"))
    }
}
