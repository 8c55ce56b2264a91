import ObserverGraph
import ObserverGraphTesting
import Testing

/// A thread-safe ordered log.
private final class Log: Sendable {
    private let entries = GraphLock<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

@Suite("TestClock: a Swift Clock driven by the test", .timeLimit(.minutes(3)))
struct TestClockTests {
    @Test("Instants: offset arithmetic, order, description")
    func instants() {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let start = TestClock.Instant(offset: .zero)
        let later = start.advanced(by: .seconds(3))
        #expect(start < later)
        #expect(start.duration(to: later) == .seconds(3))
        #expect(later.description == Duration.seconds(3).description)
        #expect(TestClock().now == start)
        #expect(TestClock().minimumResolution == .zero)
    }

    @Test("Sleepers resume by deadline, with now at each one's deadline; never before it")
    func sleepersInOrder() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        let log = Log()
        var tasks: [Task<Void, any Error>] = []
        for (name, seconds) in [("c", 3), ("a", 1), ("b", 2), ("a2", 1)] {
            tasks.append(
                Task {
                    try await clock.sleep(until: TestClock.Instant(offset: .seconds(seconds)))
                    log.append("\(name)@\(clock.now)")
                })
            // Each sleeper parks before the next starts, so the arrival order is fixed.
            while clock.sleeperCount < tasks.count { await Task.yield() }
        }
        // Nothing else advances meanwhile: each resumed task reads the deadline it woke at.
        await clock.advance(by: .seconds(1))
        _ = try await (tasks[1].value, tasks[3].value)
        #expect(Set(log.all) == ["a@1.0 seconds", "a2@1.0 seconds"])
        await clock.advance(by: .seconds(1))
        _ = try await tasks[2].value
        #expect(log.all.last == "b@2.0 seconds")
        #expect(clock.sleeperCount == 1)
        await clock.advance(to: TestClock.Instant(offset: .seconds(3)))
        _ = try await tasks[0].value
        #expect(log.all.last == "c@3.0 seconds")
        await clock.advance(to: TestClock.Instant(offset: .seconds(1)))  // never backward
        #expect(clock.now == TestClock.Instant(offset: .seconds(3)))
    }

    @Test("A deadline already passed returns at once; a cancelled sleeper throws and is removed")
    func pastDeadlineAndCancellation() async throws {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        await clock.advance(by: .seconds(1))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(1)))
        let sleeper = Task { try await clock.sleep(until: TestClock.Instant(offset: .seconds(10))) }
        while clock.sleeperCount == 0 { await Task.yield() }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: TestClock.Instant(offset: .seconds(10)))
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("A time operator on a value source times the value it starts from; its node is named")
    func valueSource() async {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        let query = ObservableValue("s")
        let search = query.debounce(for: .seconds(1), clock: clock)
        #expect(search.graphDisplayName == "debounce")
        #expect(search.value == nil)
        await clock.advance(by: .seconds(1))
        #expect(search.value == "s")
        query.value = "sw"
        query.value = "swift"
        await clock.advance(by: .milliseconds(999))
        #expect(search.value == "s")
        await clock.advance(by: .milliseconds(1))
        #expect(search.value == "swift")
        let names = [
            query.throttle(for: .seconds(1), clock: clock, latest: true).graphDisplayName,
            query.delay(for: .seconds(1), clock: clock).graphDisplayName,
        ]
        #expect(names == ["throttle", "delay"])
        await clock.settle()
    }

    @Test("Cancelling the last token of a chain cancels its timers; the chain is released")
    func lastTokenCancelsTimers() async {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        let channel = EventChannel<Int>()
        let log = Log()
        weak var weakDelay: DerivedValue<Int>?
        let token: SubscriptionToken = {
            let delayed = channel.delay(for: .seconds(1), clock: clock)
            weakDelay = delayed
            return delayed.map { $0 + 1 }.observeValuesNonisolated { log.append("\($0)") }
        }()
        channel.send(1)
        await clock.settle()
        #expect(clock.sleeperCount == 1)
        #expect(weakDelay != nil)
        token.cancel()
        await clock.settle()
        #expect(clock.sleeperCount == 0)
        #expect(weakDelay == nil)
        channel.send(2)
        await clock.advance(by: .seconds(5))
        #expect(log.all.isEmpty)
    }

    @Test("delay: values due at the same instant leave in passes of their own; a join below sees each")
    func delaySendsEachDueValueInItsOwnPass() async {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        let channel = EventChannel<Int>()
        let delayed = channel.delay(for: .seconds(1), clock: clock)
        let log = Log()
        let tokens = [
            delayed.combineLatest(ObservableValue(0)).observeValuesNonisolated {
                log.append("\($0.0),\($0.1)")
            },
            delayed.map { $0 }.combineLatest(delayed.scan(0, +)).observeValuesNonisolated {
                log.append("sum \($0.0),\($0.1)")
            },
        ]
        channel.send(1)
        channel.send(2)
        channel.finish()
        await clock.advance(by: .seconds(1))
        #expect(log.all == ["1,0", "sum 1,1", "2,0", "sum 2,3"])
        #expect(delayed.terminalEvent == .finished)
        withExtendedLifetime(tokens) {}
    }

    @Test("Timers with the same deadline resume in the order they went to sleep")
    func equalDeadlinesInArrivalOrder() async {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let clock = TestClock()
        let log = Log()
        let first = EventChannel<String>()
        let second = EventChannel<String>()
        let tokens = [
            first.debounce(for: .seconds(1), clock: clock).observeValuesNonisolated { log.append($0) },
            second.debounce(for: .seconds(1), clock: clock).observeValuesNonisolated { log.append($0) },
        ]
        first.send("a")
        await clock.settle()
        second.send("b")
        await clock.settle()
        await clock.advance(by: .seconds(1))
        #expect(log.all == ["a", "b"])
        withExtendedLifetime(tokens) {}
    }

    @Test("The README example prints what it says")
    func readmeExample() async {
        guard #available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) else { return }
        let log = Log()
        @Sendable func print(_ text: String) { log.append(text) }

        let clock = TestClock()  // in an app: ContinuousClock()
        let query = EventChannel<String>()
        let search = query.debounce(for: .seconds(1), clock: clock)
        let token = search.observeValuesNonisolated { print($0) }
        query.send("sw")
        query.send("swift")
        await clock.advance(by: .seconds(1))  // prints "swift"
        #expect(log.all == ["swift"])
        withExtendedLifetime(token) {}
    }
}
