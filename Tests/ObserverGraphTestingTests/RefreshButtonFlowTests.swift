import ObserverGraph
import ObserverGraphTesting
import Testing

/// The refresh button of source document 002, rebuilt with operators: taps are counted with
/// `scan`, the count is mapped to a `ViewState` (an error every 10th tap, a color on other even
/// taps, empty on odd ones), and `prepend` shows `.loading` until the first tap. The error is a
/// value: the stream goes on after it.
@Suite("Seed flow: the refresh button (scan + map to a ViewState) as marble diagrams")
struct RefreshButtonFlowTests {
    struct DemoError: Error {}

    static let colors = ["red", "green", "blue"]

    /// The document's map, with the random color replaced by a color picked from the count.
    static func viewState(_ count: Int) -> ViewState<String> {
        if count % 10 == 0 { return .error(DemoError()) }
        if count % 2 == 0 { return .result(colors[(count / 2) % colors.count]) }
        return .empty
    }

    static func symbol(_ state: ViewState<String>) -> String {
        switch state {
        case .loading: "L"
        case .empty: "e"
        case .error: "E"
        case .result(let color): String(color.prefix(1))
        }
    }

    /// Taps at `tapSteps`, then `end` (finish or fail the taps) at `endStep`; returns the diagram
    /// of the taps, the tap count and the view state.
    func play(tapSteps: [Int], end: ((EventChannel<Void>) -> Void, Int)? = nil) -> MarbleDiagram {
        let clock = VirtualClock()
        let taps = EventChannel<Void>()
        let count = taps.scan(0) { count, _ in count + 1 }
        let state = count.map(Self.viewState).prepend(.loading)
        let tapRow = RecordingObserver<Void>(clock: clock, name: "taps")
        let countRow = RecordingObserver<Int>(clock: clock, name: "count")
        let stateRow = RecordingObserver<ViewState<String>>(clock: clock, name: "state")
        tapRow.record(taps)
        let tokens = [
            count.observeNonisolated { countRow.record($0) },
            state.observeNonisolated { stateRow.record($0) },
        ]
        for step in tapSteps { clock.schedule(at: step) { taps.send(()) } }
        if let (end, step) = end { clock.schedule(at: step) { end(taps) } }
        clock.run()
        clock.advance(by: 1)
        let diagram = MarbleDiagram(
            tapRow.marbleRow(label: "tap") { _ in "O" },
            countRow.marbleRow(label: "scan(0) { $0 + 1 }") { "\($0)" },
            stateRow.marbleRow(label: "map { ViewState }", symbol: Self.symbol))
        for token in tokens { token.cancel() }
        tapRow.cancel()
        return diagram
    }

    @Test("Twelve taps: empty on odd taps, a color on even ones, an error on the 10th; the stream goes on")
    func twelveTaps() throws {
        try play(tapSteps: Array(1...12)).verify(
            matches: """
                tap               : -OOOOOOOOOO---O---O----->
                scan(0) { $0 + 1 }: -123456789[10][11][12]-->
                map { ViewState } : LegeberegeE---e---r----->
                """)
    }

    @Test("The taps finish: the count and the view state finish with them")
    func tapsFinish() throws {
        try play(tapSteps: [1, 2, 4], end: ({ $0.finish() }, 6)).verify(
            matches: """
                tap               : -OO-O-|->
                scan(0) { $0 + 1 }: -12-3-|->
                map { ViewState } : Leg-e-|->
                """)
    }

    @Test("The taps fail: the failure ends the count and the view state (an error value does not)")
    func tapsFail() throws {
        struct Broken: Error {}
        try play(tapSteps: [1, 2, 3], end: ({ $0.fail(Broken()) }, 5)).verify(
            matches: """
                tap               : -OOO-X->
                scan(0) { $0 + 1 }: -123-X->
                map { ViewState } : Lege-X->
                """)
    }
}
