import Foundation
import ObserverGraph
import Testing

/// What a closure captures, to see when the kit releases the closure.
private final class Held: Sendable {}

/// Closure observers are delivered from the source's own list of them, which must follow every
/// way an observer joins or leaves the node: these tests check each one with exact histories.
@Suite("Closure observers: every way in and out of the observer list", .timeLimit(.minutes(3)))
struct ClosureRosterTests {
    @Test("removeAllObservers() stops every closure at once; a closure that joins later gets what follows")
    func removeAllStopsEveryClosure() {
        let value = ObservableValue(0)
        let log = EventLog()
        let a = value.observeValuesNonisolated { log.append("a \($0)") }
        let b = value.observeValuesNonisolated { log.append("b \($0)") }
        value.set(1)
        #expect(value.removeAllObservers().count == 2)
        value.set(2)
        let c = value.observeValuesNonisolated { log.append("c \($0)") }
        value.set(3)
        #expect(log.all == ["a 0", "b 0", "a 1", "b 1", "c 2", "c 3"])
        #expect(value.observers.count == 1)
        withExtendedLifetime((a, b, c)) {}
    }

    @Test("removeObserver of one closure observer stops that one only, the others keep their order")
    func removeOneClosureObserver() {
        let channel = EventChannel<Int>()
        let log = EventLog()
        let tokens = ["a", "b", "c"].map { name in
            channel.observeValuesNonisolated { log.append("\(name) \($0)") }
        }
        channel.send(1)
        let middle = channel.observers[1]
        #expect(channel.removeObserver(middle) != nil)
        channel.send(2)
        #expect(log.all == ["a 1", "b 1", "c 1", "a 2", "c 2"])
        #expect(!tokens[1].isCancelled)  // removed from the graph, not cancelled
        withExtendedLifetime(tokens) {}
    }

    @Test("A closure that removes a later observer during a delivery: that one is not called for it")
    func removalDuringDeliveryOnTheSameThread() {
        let channel = EventChannel<Int>()
        let log = EventLog()
        let first = channel.observeValuesNonisolated { value in
            log.append("first \(value)")
            if value == 2 { _ = channel.removeObserver(channel.observers[1]) }
        }
        let second = channel.observeValuesNonisolated { log.append("second \($0)") }
        let third = channel.observeValuesNonisolated { log.append("third \($0)") }
        channel.send(1)
        channel.send(2)
        channel.send(3)
        #expect(log.all == ["first 1", "second 1", "third 1", "first 2", "third 2", "first 3", "third 3"])
        withExtendedLifetime((first, second, third)) {}
    }

    @Test("cancel() releases the closure at once, and a dropped token is released with no delivery")
    func cancelReleasesTheClosure() {
        let value = ObservableValue(0)
        var held: Held? = Held()
        weak let watched = held
        let calls = Counters()
        let token = value.observeValuesNonisolated { [held] _ in
            withExtendedLifetime(held) {}
            calls.bump("kept")
        }
        var dropped: Held? = Held()
        weak let watchedDropped = dropped
        _ = value.observeValuesNonisolated { [dropped] _ in
            withExtendedLifetime(dropped) {}
            calls.bump("dropped")
        }
        held = nil
        dropped = nil
        #expect(watchedDropped == nil)
        value.set(1)
        #expect(watched != nil)
        token.cancel()
        #expect(watched == nil)  // released by cancel(), before any further delivery
        value.set(2)
        #expect(calls["kept"] == 2)
        #expect(calls["dropped"] == 1)  // only its first value, before the token was dropped
        #expect(value.observers.isEmpty)
    }

    @Test(
        "An observer added with addObserver gets no events, and its coming and going leaves the closures alone"
    )
    func plainObserverAmongClosures() {
        let value = ObservableValue(0)
        let log = EventLog()
        let watcher = Watcher("w", log: log)
        let a = value.observeValuesNonisolated { log.append("a \($0)") }
        value.addObserver(watcher)
        let b = value.observeValuesNonisolated { log.append("b \($0)") }
        value.set(1)
        value.removeObserver(watcher)
        value.set(2)
        #expect(
            log.all == [
                "a 0", "w.didSubscribe(ObservableValue<Int>)", "b 0", "a 1", "b 1",
                "w.didUnsubscribe(ObservableValue<Int>)",
                "a 2", "b 2",
            ])
        withExtendedLifetime((a, b)) {}
    }

    @Test("Seeded churn: joins, cancels, removals and sets match a model, event by event")
    func churnMatchesAModel() {
        var random = SeededGenerator(seed: 0x0B5E_2024)
        for _ in 0..<20 {
            let value = ObservableValue(0)
            let log = EventLog()
            var expected: [String] = []
            var tokens: [Int: SubscriptionToken] = [:]
            var active: [Int] = []  // in join order, as the node lists them
            var next = 0
            var current = 0
            for _ in 0..<200 {
                switch random.next() % 10 {
                case 0, 1:
                    let name = next
                    next += 1
                    tokens[name] = value.observeValuesNonisolated { log.append("\(name): \($0)") }
                    active.append(name)
                    expected.append("\(name): \(current)")
                case 2:
                    guard !active.isEmpty else { continue }
                    let name = active.remove(at: Int(random.next() % UInt64(active.count)))
                    tokens[name]?.cancel()
                case 3:
                    guard !active.isEmpty else { continue }
                    let position = Int(random.next() % UInt64(active.count))
                    _ = value.removeObserver(value.observers[position])
                    active.remove(at: position)
                case 4 where random.next() % 8 == 0:
                    value.removeAllObservers()
                    active.removeAll()
                default:
                    current += 1
                    value.set(current)
                    expected += active.map { "\($0): \(current)" }
                }
            }
            #expect(log.all == expected)
            #expect(value.observers.count == active.count)
            withExtendedLifetime(tokens) {}
        }
    }

    @Test("Closures joining and leaving on other threads while a thread sets: each sees an unbroken run")
    func joinsAndLeavesDuringDeliveries() async {
        let value = ObservableValue(0)
        let sets = 20_000
        let runs = GraphLock<[[Int]]>([])
        await onBackgroundThreads(4) { index in
            if index == 0 {
                for next in 1...sets { value.set(next) }
                return
            }
            for round in 0..<300 {
                let run = GraphLock<[Int]>([])
                let token = value.observeValuesNonisolated { received in run.withLock { $0.append(received) }
                }
                for _ in 0..<(round % 7) * 50 { _ = value.observers.isEmpty }  // stay a varying while
                if round % 7 == 0 {
                    // Every 7th stays until its first value came (the current one, delivered by
                    // the running drain or, once the sets are over, by the join itself), so
                    // that a known number of runs see something however the threads are
                    // scheduled. A lost first value fails the count below instead of hanging.
                    let deadline = ContinuousClock.now + .seconds(10)
                    while run.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
                        Thread.sleep(forTimeInterval: 0.0001)
                    }
                }
                token.cancel()
                let seen = run.withLock { $0 }
                runs.withLock { $0.append(seen) }
            }
        }
        let all = runs.withLock { $0 }
        #expect(all.count == 900)
        // The current value first, then every later set, none missed, none twice. (A closure that
        // joined while the setter was delivering, and left before that delivery ended, saw nothing:
        // its first value comes after the running delivery.)
        let seen = all.filter { !$0.isEmpty }
        let broken = seen.filter { run in zip(run, run.dropFirst()).contains { $1 != $0 + 1 } }
        #expect(broken.isEmpty, "\(broken.prefix(3))")
        #expect(seen.count >= 3 * 43)  // rounds 0, 7, …, 294 of each of the 3 joining threads
        #expect(value.observers.isEmpty)
    }

    @MainActor
    @Test("Main-actor closures: removeAllObservers and a re-join, delivered on the main actor in order")
    func mainActorClosures() {
        let value = ObservableValue("a")
        var seen: [String] = []
        let first = value.observeValues { seen.append("1 \($0)") }
        value.set("b")
        value.removeAllObservers()
        value.set("c")
        let second = value.observeValues { seen.append("2 \($0)") }
        value.set("d")
        #expect(seen == ["1 a", "1 b", "2 c", "2 d"])
        withExtendedLifetime((first, second)) {}
    }
}
