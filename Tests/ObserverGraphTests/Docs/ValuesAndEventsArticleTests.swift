import ObserverGraph
import Testing

// The code blocks of the article "Values and events" (ObserverGraph.docc/ValuesAndEvents.md),
// verbatim: DocSnippetTests fails when a block of the article is not found here. Each block is
// followed by expectations that check what its comments claim; its `print` calls are recorded.
// The blocks run on the main actor, as the article says, except the nonisolated one.

@Suite("Docs: Values and events")
@MainActor
struct ValuesAndEventsArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    @Test("ObservableValue: the current value at once, then every change")
    func observableValue() {
        let credits = ObservableValue(0)
        let creditsToken = credits.observeValues { print("credits:", $0) }  // prints "credits: 0" at once
        credits.set(5)  // prints "credits: 5"
        credits.update { $0 += 10 }  // atomic read-modify-write: prints "credits: 15"
        #expect(output.all == ["credits: 0", "credits: 5", "credits: 15"])
        #expect(credits.observerCount == 1)
        creditsToken.cancel()
        #expect(credits.observerCount == 0)
    }

    @Test("EventChannel: no replay")
    func eventChannel() {
        let taps = EventChannel<Int>()
        taps.send(1)  // nobody hears it: no replay
        let tapsToken = taps.observeValues { print("tap", $0) }
        taps.send(2)  // prints "tap 2"
        #expect(output.all == ["tap 2"])
        tapsToken.cancel()
    }

    @Test("Termination: the terminal event, then nothing")
    func termination() {
        let downloads = EventChannel<String>()
        let downloadsToken = downloads.observe { event in
            switch event {
            case .value(let name): print("downloaded", name)
            case .finished: print("all done")
            case .failed(let error): print("stopped:", error)
            }
        }
        downloads.send("report.pdf")  // prints "downloaded report.pdf"
        downloads.finish()  // prints "all done"; the observer is removed
        downloads.send("late.pdf")  // ignored: returns false
        #expect(output.all == ["downloaded report.pdf", "all done"])
        #expect(!downloads.send("late.pdf") && downloads.observerCount == 0)
        #expect(downloadsToken.isCancelled)
    }

    @Test("ViewState: a recoverable error is a value")
    func viewState() {
        struct Offline: Error {}
        let screen = ObservableValue<ViewState<[String]>>(.loading)
        let states = screen.observeValuesNonisolated { [output] in output.append("\($0)") }
        screen.value = ViewState(Result<[String], any Error>.failure(Offline()))  // .error: show "retry"
        screen.value = ViewState(Result<[String], any Error>.success(["Laundry"]))  // .result(["Laundry"])
        // An error's description names its context, which differs by build: compare the ends.
        let printed = output.all.map { $0.hasPrefix("error(") && $0.hasSuffix(".Offline())") ? "error" : $0 }
        #expect(printed == ["loading", "error", #"result(["Laundry"])"#])
        #expect(screen.value.result == ["Laundry"] && screen.terminalEvent == nil)
        states.cancel()
    }

    @Test("A TokenBag cancels all its tokens")
    func tokenBag() {
        let bag = TokenBag()
        let balance = ObservableValue(0)
        balance.observeValues { print("balance:", $0) }.store(in: bag)  // prints "balance: 0"
        balance.set(3)  // prints "balance: 3"
        bag.cancelAll()  // the closure is released; nothing more is printed
        balance.set(4)
        #expect(output.all == ["balance: 0", "balance: 3"])
        #expect(bag.count == 0 && balance.observerCount == 0)
    }

    @Test("A write-back from an observer is delivered after the current event")
    nonisolated func reentrantWrite() {
        let level = ObservableValue(0)
        let clamp = level.observeValuesNonisolated { if $0 > 10 { level.value = 10 } }  // writes back
        let seen = ObservableValue<[Int]>([])
        let recorder = level.observeValuesNonisolated { value in seen.update { $0.append(value) } }
        level.value = 12  // both observers see 12, then 10: seen.value == [0, 12, 10]
        #expect(seen.value == [0, 12, 10] && level.value == 10)
        clamp.cancel()
        recorder.cancel()
    }

    @Test("On the main actor, a closure that writes back to its own source does not re-enter itself")
    func reentrantWriteOnActor() {
        let level = ObservableValue(0)
        var calls: [Int] = []
        var depth = 0
        let clamp = level.observeValues { value in
            depth += 1
            #expect(depth == 1)
            calls.append(value)
            if value > 10 { level.set(10) }
            depth -= 1
        }
        level.set(12)
        #expect(calls == [0, 12, 10] && level.value == 10)
        clamp.cancel()
    }

    @Test("A property setter reaches a main-actor closure at once; another actor's, on its next turn")
    func setterOnActors() async {
        let credits = ObservableValue(0)
        var seen: [Int] = []
        let token = credits.observeValues { seen.append($0) }
        credits.value = 5
        #expect(seen == [0, 5])
        token.cancel()

        let ledger = Ledger()
        await ledger.start(credits)
        #expect(await ledger.setWithSetter(credits, 6) == [5])  // not yet: the setter is nonisolated
        #expect(await ledger.setWithSet(credits, 7) == [5, 6, 7])  // set(_:) runs the mailbox first
        await ledger.stop()
    }
}

/// An actor that observes a value, for the setter's test above.
private actor Ledger {
    private var seen: [Int] = []
    private var token: SubscriptionToken?

    func start(_ credits: ObservableValue<Int>) {
        token = credits.observeValues { self.seen.append($0) }
    }

    /// Sets with the property setter and returns what the closure had seen when it returned.
    func setWithSetter(_ credits: ObservableValue<Int>, _ value: Int) -> [Int] {
        credits.value = value
        return seen
    }

    /// Sets with `set(_:)` and returns what the closure had seen when it returned.
    func setWithSet(_ credits: ObservableValue<Int>, _ value: Int) -> [Int] {
        credits.set(value)
        return seen
    }

    func stop() { token?.cancel() }
}
