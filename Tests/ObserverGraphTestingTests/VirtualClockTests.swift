import ObserverGraph
import ObserverGraphTesting
import Testing

/// What the scheduled actions saw: their tag and the clock's step when they ran.
private final class Trace: @unchecked Sendable {
    var entries: [String] = []
}

@Suite("Virtual clock: deterministic steps and scheduled actions")
struct VirtualClockTests {
    @Test("Actions run in step order, in scheduling order within a step, each at its own step")
    func order() {
        let clock = VirtualClock()
        let trace = Trace()
        for (step, tag) in [(3, "c"), (1, "a"), (3, "d"), (2, "b"), (0, "start")] {
            clock.schedule(at: step) { trace.entries.append("\(tag)@\(clock.now)") }
        }
        #expect(clock.now == 0 && trace.entries.isEmpty, "nothing runs before the clock moves")
        clock.run()
        #expect(trace.entries == ["start@0", "a@1", "b@2", "c@3", "d@3"])
        #expect(clock.now == 3)
    }

    @Test("advance runs only what is due, and moves now even when nothing is scheduled")
    func advance() {
        let clock = VirtualClock()
        let trace = Trace()
        clock.schedule(at: 2) { trace.entries.append("two@\(clock.now)") }
        clock.schedule(at: 5) { trace.entries.append("five@\(clock.now)") }
        clock.advance()
        #expect(clock.now == 1 && trace.entries.isEmpty)
        clock.advance(by: 3)
        #expect(clock.now == 4 && trace.entries == ["two@2"])
        clock.advance(to: 2)
        #expect(clock.now == 4, "time never goes back")
        clock.advance(to: 10)
        #expect(clock.now == 10 && trace.entries == ["two@2", "five@5"])
        clock.run()
        #expect(clock.now == 10, "run with nothing scheduled does not move time")
    }

    @Test("The doc comment's example: at t=3, set done = false")
    func docExample() {
        let clock = VirtualClock()
        let done = ObservableValue(true)
        let recorder = RecordingObserver<Bool>(clock: clock, name: "item.Done")
        recorder.record(done)
        clock.schedule(at: 3) { done.value = false }
        clock.schedule(at: 5) { done.finish() }
        clock.run()
        #expect(MarbleDiagram(recorder.marbleRow { $0 ? "T" : "F" }).text == "item.Done: T--F-|->")
    }

    @Test("Actions may schedule more; a step in the past means now")
    func nested() {
        let clock = VirtualClock()
        let trace = Trace()
        clock.schedule(at: 1) {
            trace.entries.append("outer@\(clock.now)")
            clock.schedule(at: 0) { trace.entries.append("past@\(clock.now)") }
            clock.schedule(at: 1) { trace.entries.append("same@\(clock.now)") }
            clock.schedule(at: 4) { trace.entries.append("later@\(clock.now)") }
        }
        clock.advance(by: 2)
        #expect(trace.entries == ["outer@1", "past@1", "same@1"])
        #expect(clock.now == 2)
        clock.schedule(at: 0) { trace.entries.append("late@\(clock.now)") }
        clock.run()
        #expect(trace.entries == ["outer@1", "past@1", "same@1", "late@2", "later@4"])
    }
}
