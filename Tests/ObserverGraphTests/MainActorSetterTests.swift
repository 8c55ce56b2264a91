import Dispatch
import ObserverGraph
import Testing

/// Runs `work` on a global queue while the main actor waits for it, blocked: nothing queued for
/// the main actor can run meanwhile, so what `work` sends to a main-actor closure is still
/// waiting in its mailbox when this returns.
@MainActor
private func offTheMainActor(_ work: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        work()
        done.signal()
    }
    done.wait()
}

/// A screen whose closures read the array that holds their sources.
@MainActor
private final class Screen {
    var values: [ObservableValue<Int>] = []
    var tokens: [SubscriptionToken] = []
    var log: [String] = []

    func load(count: Int) {
        values = (0..<count).map { _ in ObservableValue(0) }
        tokens = values.map { value in
            value.observe { [unowned self] event in
                // Reads `values`: run inside a mutation of it, this access would overlap.
                let left = self.values.count
                self.log.append(event.value.map { "\($0) of \(left)" } ?? "\(event), \(left) left")
            }
        }
    }
}

/// What a main-actor closure saw, and what it had seen when a set returned.
@MainActor
private final class MainActorLog {
    var seen: [Int] = []
    var atReturn: [Int]?
}

@Suite(
    "Main actor: a change made there without its isolation reaches its closures at once",
    .timeLimit(.minutes(3)))
@MainActor
struct MainActorSetterTests {
    @Test("value.value = x on the main actor calls main-actor closures before it returns")
    func setterDeliversAtOnce() {
        let value = ObservableValue(0)
        var log: [String] = []
        let valuesToken = value.observeValues { log.append("values \($0)") }
        let eventsToken = value.observe { log.append("events \($0.value ?? -1)") }
        value.value = 1
        #expect(log == ["values 0", "events 0", "values 1", "events 1"])
        value.value += 1
        #expect(log == ["values 0", "events 0", "values 1", "events 1", "values 2", "events 2"])
        withExtendedLifetime((valuesToken, eventsToken)) {}
    }

    @Test("ObservableState's setter and ObservableArray's subscript do the same")
    func stateAndArraySetters() {
        let state = ObservableState("a")
        let names = ObservableArray(["Tim", "Ann"])
        var log: [String] = []
        let stateToken = state.observeValues { log.append("state \($0)") }
        let namesToken = names.observeValues { log.append("names \($0.array)") }
        state.value = "b"
        names[1] = "Tony"
        #expect(log == ["state a", "names [\"Tim\", \"Ann\"]", "state b", "names [\"Tim\", \"Tony\"]"])
        withExtendedLifetime((stateToken, namesToken)) {}
    }

    @Test("Values a thread queued for a main-actor closure come first, in order, exactly once")
    func queuedValuesComeFirst() async {
        let value = ObservableValue(0)
        var seen: [Int] = []
        let token = value.observeValues { seen.append($0) }
        offTheMainActor {
            value.value = 1
            value.value = 2
        }
        // Sent from elsewhere: waiting in the closure's mailbox for the main actor's next turn.
        #expect(seen == [0])
        value.value = 3
        // The set on the main actor ran the mailbox first.
        #expect(seen == [0, 1, 2, 3])
        // The task the thread started finds nothing left to run: a value sent after it, through
        // the mailbox, arrives after anything that task could still deliver, and alone.
        offTheMainActor { value.value = 4 }
        #expect(await eventually { seen.last == 4 })
        #expect(seen == [0, 1, 2, 3, 4])
        withExtendedLifetime(token) {}
    }

    @Test("A set made on another thread still reaches a main-actor closure on the main actor only")
    func setFromAThreadWaitsForTheMainActor() async {
        let value = ObservableValue(0)
        var seen: [Int] = []
        let token = value.observeValues { seen.append($0) }
        offTheMainActor { value.value = 1 }
        #expect(seen == [0])
        #expect(await eventually { seen == [0, 1] })
        withExtendedLifetime(token) {}
    }

    @Test("A set made in a block on the main queue reaches a main-actor closure before it returns")
    func setFromAMainQueueBlock() async {
        let value = ObservableValue(0)
        let log = MainActorLog()
        let token = value.observeValues { log.seen.append($0) }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async {
                value.value = 1
                log.atReturn = log.seen
                done.resume()
            }
        }
        #expect(log.atReturn == [0, 1])
        withExtendedLifetime(token) {}
    }

    @Test("A derived value's main-actor closure gets a change made on the main actor at once")
    func derivedValueDeliversAtOnce() {
        let value = ObservableValue(1)
        let doubled = value.map { $0 * 2 }
        var seen: [Int] = []
        let token = doubled.observeValues { seen.append($0) }
        #expect(seen == [2])
        value.value = 2
        #expect(seen == [2, 4])
        value.set(3)
        #expect(seen == [2, 4, 6])
        withExtendedLifetime(token) {}
    }

    @Test("A source that goes on the main actor tells its main-actor event closure on the next turn")
    func finishedOnTheNextTurnWhenTheSourceGoes() async {
        var log: [String] = []
        let token: SubscriptionToken
        do {
            let value = ObservableValue(0)
            token = value.observe { event in log.append(event.value.map { "\($0)" } ?? "\(event)") }
            value.value = 1
        }
        // Not from inside the deinit, which runs wherever the last reference went.
        #expect(log == ["0", "1"])
        #expect(await eventually { log.count == 3 })
        #expect(log == ["0", "1", "finished"])
        #expect(token.isCancelled)
    }

    @Test("Values released inside a mutation of the state their closures read: no overlapping access")
    func sourcesReleasedInsideAMutation() async {
        let screen = Screen()
        screen.load(count: 3)
        #expect(screen.log == ["0 of 3", "0 of 3", "0 of 3"])
        screen.log = []
        screen.values.removeAll()  // each value's deinit runs inside this access to `values`
        #expect(screen.log == [])
        #expect(await eventually { screen.log.count == 3 })
        #expect(screen.log == ["finished, 0 left", "finished, 0 left", "finished, 0 left"])
    }

    @Test("Observers are called in the order they joined; a value's operators join with the first")
    func sourceAndDerivedOrder() {
        let value = ObservableValue(1)
        var log: [String] = []
        let doubled = value.map { $0 * 2 }  // the first operator: joins the value now
        let sourceToken = value.observeValues { log.append("source \($0)") }
        let derivedToken = doubled.observeValues { log.append("derived \($0)") }
        let tripled = value.map { $0 * 3 }  // fed by the same input as `doubled`
        let tripledToken = tripled.observeValues { log.append("tripled \($0)") }
        log = []
        value.value = 2
        #expect(log == ["derived 4", "tripled 6", "source 2"])
        withExtendedLifetime((sourceToken, derivedToken, tripledToken)) {}

        let other = ObservableValue(1)
        var otherLog: [String] = []
        let otherSourceToken = other.observeValues { otherLog.append("source \($0)") }
        let negated = other.map { -$0 }  // joins after the source's observer
        let negatedToken = negated.observeValues { otherLog.append("negated \($0)") }
        otherLog = []
        other.value = 2
        #expect(otherLog == ["source 2", "negated -2"])
        withExtendedLifetime((otherSourceToken, negatedToken)) {}
    }

    @Test("A queue that targets the main queue, and main.sync from a thread, count as the main actor")
    func queuesThatRunOnTheMainQueue() async {
        let value = ObservableValue(0)
        let log = MainActorLog()
        let token = value.observeValues { log.seen.append($0) }
        let targeting = DispatchQueue(label: "targets main", target: .main)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            targeting.async {
                value.value = 1
                MainActor.assumeIsolated { log.atReturn = log.seen }
                done.resume()
            }
        }
        #expect(log.atReturn == [0, 1])
        let atReturn = GraphLock<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.main.sync {
                    value.value = 2
                    atReturn.withLock { $0 = MainActor.assumeIsolated { log.seen } }
                }
                done.resume()
            }
        }
        #expect(atReturn.withLock { $0 } == [0, 1, 2])
        withExtendedLifetime(token) {}
    }

    @Test("A main-actor closure cancelled from inside a call the setter made is not called again")
    func cancelInsideASetterCall() {
        let value = ObservableValue(0)
        var seen: [Int] = []
        var token: SubscriptionToken?
        token = value.observeValues { v in
            seen.append(v)
            if v == 1 { token?.cancel() }
        }
        value.value = 1
        value.value = 2
        #expect(seen == [0, 1])
        #expect(token?.isCancelled == true)
    }

    @Test("A main-actor closure that sets its own source from inside is called again after it returns")
    func reentrantSetFromTheClosure() {
        let value = ObservableValue(0)
        var log: [String] = []
        var token: SubscriptionToken?
        token = value.observeValues { v in
            log.append("begin \(v)")
            if v == 1 { value.value = 2 }
            log.append("end \(v)")
        }
        value.value = 1
        #expect(log == ["begin 0", "end 0", "begin 1", "end 1", "begin 2", "end 2"])
        token?.cancel()
        value.value = 3
        #expect(log.count == 6)
    }
}
