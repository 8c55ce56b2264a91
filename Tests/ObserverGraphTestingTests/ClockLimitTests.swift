import ObserverGraph
import ObserverGraphTesting
import Testing

@Suite("Testing kit at the end of time: saturating steps, long rows, no trap")
struct ClockLimitTests {
    @Test("advance(by: .max) saturates at Int.max and stays there; time never goes back")
    func clockSaturates() {
        let clock = VirtualClock()
        var ran: [Int] = []
        clock.schedule(at: .max) { ran.append(clock.now) }
        clock.advance(by: 5)
        clock.advance(by: .max)
        #expect(clock.now == .max && ran == [.max])
        clock.advance(by: .max)
        clock.advance(by: 1)
        #expect(clock.now == .max)
        clock.advance(by: .min)
        clock.advance(to: 0)
        #expect(clock.now == .max)
        clock.schedule(at: 3) { ran.append(clock.now) }  // in the past: runs now
        clock.run()
        #expect(ran == [.max, .max])
    }

    @Test("A recorder's marble row after advance(by: .max): Int.max steps, events on the last step")
    func recorderRowAtTheEnd() throws {
        let clock = VirtualClock()
        let value = ObservableValue(1)
        let recorder = RecordingObserver<Int>(clock: clock, name: "v")
        recorder.record(value)
        clock.advance(by: .max)
        value.value = 2
        let row = recorder.marbleRow()
        #expect(row.length == .max)
        #expect(row.events == [MarbleEvent(.value("1"), at: 0), MarbleEvent(.value("2"), at: .max - 1)])
        value.finish()
        let finished = recorder.marbleRow()
        #expect(finished.length == .max && finished.events.last == MarbleEvent(.finished, at: .max - 1))
        withExtendedLifetime(recorder) {}
    }

    @Test("MarbleEvent and MarbleRow clamp steps and lengths instead of overflowing")
    func rowClamps() {
        #expect(MarbleEvent(.failed, at: .max).step == MarbleEvent.maximumStep)
        #expect(MarbleEvent(.failed, at: .min).step == 0)
        let row = MarbleRow(label: "r", length: .max, events: [MarbleEvent(.value("a"), at: .max)])
        #expect(row.length == .max && row.events.map(\.step) == [.max - 1])
        let short = MarbleRow(length: -7, events: [])
        #expect(short.length == 0)
        #expect(MarbleRow(events: [MarbleEvent(.subscribed, at: .max)]).length == .max)
    }

    @Test("A row longer than the render limit is cut, says so, and does not parse back")
    func longRowRendering() {
        let limit = MarbleDiagram.maximumRenderedSteps
        let row = MarbleRow(
            label: "r", length: .max,
            events: [MarbleEvent(.value("a"), at: 1), MarbleEvent(.value("b"), at: .max)])
        let diagram = MarbleDiagram(row, MarbleRow(label: "s", length: 3, events: []))
        let lines = diagram.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("r: -a--"))
        #expect(lines[0].hasSuffix("-> (\(Int.max - limit) more steps, 1 more events not shown)"))
        #expect(
            lines[0].count == "r: ".count + limit + "->".count
                + " (\(Int.max - limit) more steps, 1 more events not shown)".count)
        #expect(lines[1] == "s: ---->")
        #expect(throws: MarbleParseError.self) { try MarbleDiagram(parsing: diagram.text) }
    }

    @Test("A row of exactly the render limit round-trips")
    func rowAtTheLimit() throws {
        let limit = MarbleDiagram.maximumRenderedSteps
        let row = MarbleRow(length: limit, events: [MarbleEvent(.finished, at: limit - 1)])
        let diagram = MarbleDiagram(row)
        #expect(diagram.text.hasSuffix("-|->"))
        #expect(try MarbleDiagram(parsing: diagram.text) == diagram)
    }

    @Test("Comparing rows of Int.max steps finds the first difference without walking every step")
    func mismatchOnLongRows() throws {
        let want = MarbleRow(length: .max, events: [MarbleEvent(.value("a"), at: 1 << 40)])
        let got = MarbleRow(length: .max, events: [MarbleEvent(.value("b"), at: 1 << 40)])
        let mismatch = MarbleMismatch(expected: MarbleDiagram(want), actual: MarbleDiagram(got))
        #expect(
            mismatch.description.hasPrefix(
                "marble diagrams differ: row 1, step \(1 << 40): expected a, got b"))
        let ended = MarbleMismatch(
            expected: MarbleDiagram(MarbleRow(length: .max, events: [])),
            actual: MarbleDiagram(MarbleRow(length: 5, events: [])))
        #expect(
            ended.description.hasPrefix(
                "marble diagrams differ: row 1, step 5: expected -, got the end of the row"))
    }
}
