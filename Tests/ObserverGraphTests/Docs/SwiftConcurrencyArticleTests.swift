import ObserverGraph
import Testing

// The code blocks of the article "Swift concurrency and actors"
// (ObserverGraph.docc/SwiftConcurrency.md), verbatim: DocSnippetTests fails when a block of the
// article is not found here. Its `print` calls are recorded, and checked against its comments.

@Suite("Docs: Swift concurrency and actors", .timeLimit(.minutes(1)))
struct SwiftConcurrencyArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    actor Ledger {
        private(set) var entries: [Int] = []
        func record(_ value: Int) { entries.append(value) }
    }

    @Test("The loop prints every value before the program goes on")
    func loop() async throws {
        let credits = ObservableValue(0)
        let updates = credits.values()  // observes now: the current value, then every change
        let printer = Task {
            for try await value in updates { print("credits:", value) }
        }
        credits.value = 5
        credits.finish()  // ends the loop
        try await printer.value  // wait for the loop: it prints "credits: 0", then "credits: 5"
        #expect(output.all == ["credits: 0", "credits: 5"])
        #expect(credits.observerCount == 0)
    }

    @Test("A loop feeds an actor in order")
    func actorFeed() async throws {
        let balance = ObservableValue(0)
        let ledger = Ledger()
        let balances = balance.values()
        let feeder = Task {
            for try await value in balances { await ledger.record(value) }  // in order, one at a time
        }
        balance.value = 5
        balance.value = 15
        balance.finish()
        try await feeder.value
        print(await ledger.entries)  // [0, 5, 15]
        #expect(output.all == ["[0, 5, 15]"])
    }
}
