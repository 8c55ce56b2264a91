import ObserverGraph
import ObserverGraphTesting
import Testing

private struct MarbleFailure: Error {}

/// Plays a marble row into a channel on a `TestClock` (one step = one second), applies a time
/// operator, and returns the output as a marble row. At each step, the timers due fire first,
/// then the step's inputs are sent. `releaseAt` cancels the observation and drops the derived
/// value at that step (after its timers, before its inputs), then checks that the value is gone
/// and no timer sleeps any more.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
private func play(
    _ row: String, releaseAt: Int? = nil,
    _ apply: (EventChannel<String>, TestClock) -> DerivedValue<String>
) async throws -> String {
    let steps = VirtualClock()
    let clock = TestClock()
    let channel = EventChannel<String>()
    let recorder = RecordingObserver<String>(clock: steps, name: "out")
    var output: DerivedValue<String>? = apply(channel, clock)
    weak let weakOutput = output
    var token = output?.observeNonisolated { recorder.record($0) }
    let parsed = try MarbleDiagram(parsing: row).rows[0]
    for step in 0..<parsed.length {
        steps.advance(to: step)
        await clock.advance(to: TestClock.Instant(offset: .seconds(step)))
        if step == releaseAt {
            token?.cancel()
            token = nil
            output = nil
            await clock.settle()
            #expect(weakOutput == nil)
            #expect(clock.sleeperCount == 0)
        }
        for event in parsed.events where event.step == step {
            switch event.symbol {
            case .value(let text): channel.send(text)
            case .finished: channel.finish()
            case .failed: channel.fail(MarbleFailure())
            case .subscribed, .unsubscribed: break
            }
        }
        await clock.settle()  // a zero interval's timer fires at this step
    }
    withExtendedLifetime(token) {}
    return MarbleDiagram(recorder.marbleRow(label: "")).text
}

// Swift Testing cannot mark a suite `@available`: each test checks, and the guard always passes
// on the platforms the suite runs on (Linux, and the macOS of CI).
/// Checks a played marble row (a function, so a mismatch shows both rows).
private func expect(_ actual: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual == expected, sourceLocation: sourceLocation)
}

@Suite("Time operators as marble diagrams on a TestClock", .timeLimit(.minutes(3)))
struct TimeOperatorMarbleTests {
    @Test("debounce: the latest value after a quiet interval; finish flushes; failure drops")
    func debounce() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let debounced: (EventChannel<String>, TestClock) -> DerivedValue<String> = {
            $0.debounce(for: .seconds(2), clock: $1)
        }
        // "c" is due at step 8, where "d" arrives: the timer fires first.
        try await expect(play("-ab---c-d--|->", debounced), "----b---c-d|->")
        try await expect(play("-a-b|->", debounced), "---a(b|)->")
        try await expect(play("-aX->", debounced), "--X->")
        try await expect(play("-a--b-c->", releaseAt: 5, debounced), "---a---->")
    }

    @Test("throttle(latest: true): at once, then the latest value at the end of each interval")
    func throttleLatest() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let throttled: (EventChannel<String>, TestClock) -> DerivedValue<String> = {
            $0.throttle(for: .seconds(2), clock: $1, latest: true)
        }
        try await expect(play("-abcd----|->", throttled), "-a-b-d---|->")
        try await expect(play("-abc|->", throttled), "-a-b(c|)->")
        try await expect(play("-abcX->", throttled), "-a-bX->")  // "c" waits, and is dropped
        try await expect(play("-ab-c-d->", releaseAt: 2, throttled), "-a------>")
    }

    @Test("throttle(latest: false): at once, then the first value of each interval at its end")
    func throttleFirst() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let throttled: (EventChannel<String>, TestClock) -> DerivedValue<String> = {
            $0.throttle(for: .seconds(2), clock: $1, latest: false)
        }
        try await expect(play("-abcd----|->", throttled), "-a-b-c---|->")
        try await expect(play("-abc-d->", releaseAt: 2, throttled), "-a----->")
        // A failure drops the waiting "b" (the interval of 3 has not ended).
        try await expect(play("-abX->") { $0.throttle(for: .seconds(3), clock: $1, latest: false) }, "-a-X->")
    }

    @Test("delay: every event shifted, in order; finish after the pending values; failure at once")
    func delay() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let delayed: (EventChannel<String>, TestClock) -> DerivedValue<String> = {
            $0.delay(for: .seconds(2), clock: $1)
        }
        try await expect(play("-ab--c-|--->", delayed), "---ab--c-|->")
        try await expect(play("-abX->") { $0.delay(for: .seconds(3), clock: $1) }, "---X->")
        try await expect(play("-ab-c->", releaseAt: 3, delayed), "---a-->")
    }

    @Test("A negative interval counts as zero: values still pass, through the clock, at once")
    func negativeInterval() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        try await expect(play("-a-b-|->") { $0.delay(for: .seconds(-1), clock: $1) }, "-a-b-|->")
        try await expect(play("-a-b-|->") { $0.debounce(for: .seconds(-1), clock: $1) }, "-a-b-|->")
    }

    @Test("Chained timers settle: debounce, then delay, then map")
    func chained() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let chain: (EventChannel<String>, TestClock) -> DerivedValue<String> = { channel, clock in
            channel.debounce(for: .seconds(2), clock: clock).delay(for: .seconds(1), clock: clock)
                .map { $0.uppercased() }
        }
        // "c" leaves debounce at step 9, where the source finishes: both are delayed to step 10.
        try await expect(play("-ab----c-|--->", chain), "-----B----(C|)->")
        try await expect(play("-ab-->", releaseAt: 4, chain), "----->")
    }
}
