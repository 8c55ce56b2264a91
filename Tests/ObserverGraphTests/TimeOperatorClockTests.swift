import Dispatch
import ObserverGraph
import Testing

/// Time operators on a real clock: only orders and counts are checked, never how long anything
/// took (the deterministic timing tests run on the testing product's `TestClock`).
@Suite("Time operators on ContinuousClock: order and completeness", .timeLimit(.minutes(3)))
struct TimeOperatorClockTests {
    @Test("delay on ContinuousClock keeps the order of values, then finishes")
    func delayKeepsOrder() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let channel = EventChannel<Int>()
        let delayed = channel.delay(for: .milliseconds(5), clock: ContinuousClock())
        let stream = delayed.values()
        for value in 1...20 { channel.send(value) }
        channel.finish()
        var received: [Int] = []
        for try await value in stream { received.append(value) }
        #expect(received == Array(1...20))
        #expect(delayed.terminalEvent?.isTerminal == true)
    }

    @Test("delay on ContinuousClock into combineLatest: each value sent at once still reaches the join")
    func delayIntoAJoinKeepsEveryValue() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let channel = EventChannel<Int>()
        let label = ObservableValue("y")
        let joined = channel.delay(for: .milliseconds(5), clock: ContinuousClock()).combineLatest(label)
        let stream = joined.map { $0.0 }.values()
        for value in 1...20 { channel.send(value) }
        channel.finish()
        label.finish()
        var received: [Int] = []
        for try await value in stream { received.append(value) }
        #expect(received == Array(1...20))
    }

    @Test("debounce on ContinuousClock passes the last value of the source before it finishes")
    func debounceEndsWithLastValue() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let channel = EventChannel<Int>()
        let debounced = channel.debounce(for: .milliseconds(5), clock: ContinuousClock())
        let stream = debounced.values()
        for value in 1...20 { channel.send(value) }
        channel.finish()
        var received: [Int] = []
        for try await value in stream { received.append(value) }
        // However the sends were spread in time, values pass in order and the last one passes.
        #expect(received.last == 20)
        #expect(received == received.sorted())
    }

    @Test("Concurrent sends into delay → map → throttle: every value passes delay, once")
    func concurrentSends() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let channel = EventChannel<Int>()
        let delayed = channel.delay(for: .zero, clock: ContinuousClock()).map { $0 * 2 }
        let throttled = delayed.throttle(for: .milliseconds(1), clock: ContinuousClock(), latest: true)
        let doubled = delayed.values()
        let throttledValues = throttled.values()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for value in 0..<250 { channel.send(worker * 1000 + value) }
        }
        channel.finish()
        var received: [Int] = []
        for try await value in doubled { received.append(value) }
        let expected = (0..<4).flatMap { worker in (0..<250).map { (worker * 1000 + $0) * 2 } }
        #expect(received.sorted() == expected.sorted())
        for worker in 0..<4 {  // each worker's values in the order it sent them
            let own = received.filter { $0 / 2000 == worker }
            #expect(own == own.sorted())
        }
        var throttledCount = 0
        for try await _ in throttledValues { throttledCount += 1 }
        #expect((1...1000).contains(throttledCount))
    }

    @Test("A snapshot of a timed chain lists debounce, throttle and delay by name, with their edges")
    func snapshotOfChain() {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let x = EventChannel<Int>()
        let clock = ContinuousClock()
        let debounced = x.debounce(for: .seconds(1), clock: clock)
        let throttled = debounced.throttle(for: .seconds(1), clock: clock, latest: true)
        let end = throttled.delay(for: .seconds(1), clock: clock)
        let token = end.observeNonisolated { _ in }
        let snapshot = GraphSnapshot(observables: [x])
        let names = snapshot.nodes.map(\.name)
        func edge(_ from: String, _ to: String) -> Bool {
            snapshot.edges.contains { names[$0.observable] == from && names[$0.observer] == to }
        }
        #expect(edge(x.graphDisplayName, "debounce"))
        #expect(edge("debounce", "throttle"))
        #expect(edge("throttle", "delay"))
        #expect(snapshot.isConsistent)
        withExtendedLifetime((end, token)) {}
    }
}
