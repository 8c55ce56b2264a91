import Dispatch
import ObserverGraph
import Testing

// The code blocks of the article "Swift concurrency and actors"
// (ObserverGraph.docc/SwiftConcurrency.md), verbatim: DocSnippetTests fails when a block of the
// article is not found here. Its `print` calls are recorded, and checked against its comments.

@Suite("Docs: Swift concurrency and actors", .timeLimit(.minutes(3)))
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
        credits.set(5)
        credits.finish()  // ends the loop
        try await printer.value  // wait for the loop: it prints "credits: 0", then "credits: 5"
        #expect(output.all == ["credits: 0", "credits: 5"])
        #expect(credits.observerCount == 0)
    }

    @Test("A state that cannot fail is iterated with for await, no try")
    func loopWithoutTry() async {
        let balance = ObservableState(0)  // cannot fail: no `fail(_:)`
        let balances = balance.values()
        let watcher = Task {
            for await value in balances { print("balance:", value) }  // no `try`
        }
        balance.set(5)
        balance.finish()  // ends the loop
        await watcher.value  // prints "balance: 0", then "balance: 5"
        #expect(output.all == ["balance: 0", "balance: 5"])
        #expect(balance.observerCount == 0)
    }

    @Test("An actor that keeps its token: stop() ends the observation, and the actor goes")
    func actorKeepsItsToken() async {
        let credits = EventChannel<Int>()
        weak var gone: SwiftConcurrencyArticle.CreditsStore?
        do {
            let store = SwiftConcurrencyArticle.CreditsStore()
            gone = store
            await store.start(credits)
            credits.send(5)
            #expect(await awaitValue(5) { await store.total } == 5)
            await store.stop()
        }
        #expect(await eventually { gone == nil })
    }

    @Test("A loop feeds an actor in order")
    func actorFeed() async throws {
        let balance = ObservableValue(0)
        let ledger = Ledger()
        let balances = balance.values()
        let feeder = Task {
            for try await value in balances { await ledger.record(value) }  // in order, one at a time
        }
        balance.set(5)
        balance.set(15)
        balance.finish()
        try await feeder.value
        print(await ledger.entries)  // [0, 5, 15]
        #expect(output.all == ["[0, 5, 15]"])
    }
}

/// The article's types, verbatim, in a namespace (nonisolated, as top-level types are).
enum SwiftConcurrencyArticle {
    @MainActor
    final class CreditsViewModel {
        var text = ""
        private let bag = TokenBag()

        init(credits: ObservableValue<Int>) {
            credits.observeValues { [weak self] in self?.text = "\($0) credits" }.store(in: bag)
        }
    }

    actor CreditsStore {
        private(set) var total = 0
        private var token: SubscriptionToken?

        func start(_ credits: EventChannel<Int>) {
            token = credits.observeValues { self.total += $0 }  // captures the actor
        }

        func stop() { token?.cancel() }  // ends the observation: the store can go
    }

    protocol WalletMessages {
        func creditsChanged(to credits: Int)
    }

    @MainActor
    final class WalletScreen: GraphObserver, @MainActor WalletMessages {
        var text = ""
        func creditsChanged(to credits: Int) { text = "\(credits) credits" }
    }

    final class Wallet: GraphObservable, Sendable {
        let graphNode = GraphNode()
        // Called from any thread or actor; `isolation` passes the caller's actor on to `post`.
        func spent(_ credits: Int, isolation: isolated (any Actor)? = #isolation) {
            post(as: (any WalletMessages).self) { $0.creditsChanged(to: credits) }
        }
    }
}

@Suite("Docs: Swift concurrency and actors, on the main actor", .timeLimit(.minutes(3)))
@MainActor
struct SwiftConcurrencyArticleMainActorTests {
    typealias CreditsViewModel = SwiftConcurrencyArticle.CreditsViewModel
    typealias WalletScreen = SwiftConcurrencyArticle.WalletScreen
    typealias Wallet = SwiftConcurrencyArticle.Wallet

    @Test("The view model: a set or a setter on the main actor arrives at once; a thread's, next turn")
    func viewModel() async {
        let credits = ObservableValue(1)
        let model = CreditsViewModel(credits: credits)
        #expect(model.text == "1 credits")
        credits.set(2)
        #expect(model.text == "2 credits")
        credits.value = 3  // a property setter: the kit sees that it runs on the main actor
        #expect(model.text == "3 credits")
        DispatchQueue.global().async { credits.set(4) }
        _ = await eventually { model.text == "4 credits" }
        #expect(model.text == "4 credits")
    }

    @Test("post reaches the main-actor conformance from a thread, and at once from the main actor")
    func post() async {
        let wallet = Wallet()
        let screen = WalletScreen()
        #expect(wallet.addObserver(screen) != nil)
        DispatchQueue.global().async { wallet.spent(7) }
        _ = await eventually { screen.text == "7 credits" }
        #expect(screen.text == "7 credits")
        wallet.spent(8)  // on the main actor: delivered before spent returns
        #expect(screen.text == "8 credits")
        // A post made on the main actor counts the delivery as made here.
        let result = wallet.post(as: (any SwiftConcurrencyArticle.WalletMessages).self) {
            $0.creditsChanged(to: 9)
        }
        #expect(screen.text == "9 credits" && result.delivered == 1 && result.enqueued == 0)
    }
}
