import Dispatch
import ObserverGraph
import Testing

// The README's quick start, verbatim: DocSnippetTests fails when a block of README.md is not
// found here. Its types are nested in the suite; its statements run in `quickStart`, followed by
// expectations that check what its comments claim. Its `print` calls are recorded. The README's
// "Where closures run" view model is in Docs/SwiftConcurrencyArticleTests.swift, with the article.

@Suite("README examples")
struct ReadmeTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    protocol WalletObserver { func creditsChanged(to credits: Int) }  // your message

    final class Wallet: GraphObservable {
        let graphNode = GraphNode()  // the one stored property the kit needs
        private(set) var credits = 0
        func increase(by amount: Int) {
            credits += amount
            broadcast(as: (any WalletObserver).self) { $0.creditsChanged(to: credits) }
        }
    }

    final class BalanceLabel: WalletObserver, GraphObserver {  // a class needs nothing else
        var text = ""
        func creditsChanged(to credits: Int) { text = "\(credits) credits" }
    }

    final class Dashboard: WalletObserver, GraphTrackingObserver {
        let graphNode = GraphNode()
        var lastSeen = 0
        func creditsChanged(to credits: Int) { lastSeen = credits }
    }

    @Test("The quick start does what its comments say, on the main actor as an app's top level")
    @MainActor
    func quickStart() {
        let wallet = Wallet()
        let label = BalanceLabel()  // observables hold observers weakly: keep it alive
        wallet.addObserver(label)
        wallet.increase(by: 10)  // label.text == "10 credits"
        #expect(label.text == "10 credits")
        #expect(wallet.observers.map { $0 as AnyObject }.elementsEqual([label]) { $0 === $1 })

        let balance = ObservableValue(0)  // a value with closure observers
        let token = balance.observeValues { print("balance:", $0) }  // prints "balance: 0" at once
        balance.set(5)  // prints "balance: 5"; token.cancel() ends the observation
        #expect(output.all == ["balance: 0", "balance: 5"])
        token.cancel()
        balance.set(6)
        #expect(output.all == ["balance: 0", "balance: 5"] && balance.observerCount == 0)
    }

    /// The contract a conforming type must meet, as a test you can paste next to your own types:
    /// replace `Wallet`, `BalanceLabel` and `Dashboard` with them.
    @Test("Conformance contract: one node per object, identity stable, edges symmetric")
    func conformanceContract() {
        let observable = Wallet()
        let observer = BalanceLabel()
        let tracker = Dashboard()
        #expect(observable.graphNode === observable.graphNode, "graphNode must be a stored let")
        #expect(tracker.graphNode === tracker.graphNode, "graphNode must be a stored let")
        #expect(observer.observerID == observer.observerID, "observerID must be stable")
        #expect(observable.addObserver(observer) != nil && observable.addObserver(observer) == nil)
        #expect(observable.addObserver(tracker) != nil)
        #expect(tracker.isSubscribed(to: observable) && observable.hasObserver(tracker))
        #expect(GraphNode.consistencyViolations(among: [observable.graphNode, tracker.graphNode]).isEmpty)
        #expect(observable.removeAllObservers().count == 2)
        #expect(tracker.subscriptions.isEmpty)
    }
}

// The concurrency examples of the README and of the article "Swift concurrency and actors", run
// on the main actor as an app runs them (the promise table in the Guarantees article names these
// tests; the verbatim copies of the article's blocks are in Docs/SwiftConcurrencyArticleTests).

@MainActor
private final class CreditsViewModel {
    var text = ""
    private let bag = TokenBag()

    init(credits: ObservableValue<Int>) {
        credits.observeValues { [weak self] in self?.text = "\($0) credits" }.store(in: bag)
    }
}

private protocol WalletMessages {
    func creditsChanged(to credits: Int)
}

@MainActor
private final class WalletScreen: GraphObserver, @MainActor WalletMessages {
    var text = ""
    func creditsChanged(to credits: Int) { text = "\(credits) credits" }
}

private final class PostingWallet: GraphObservable, Sendable {
    let graphNode = GraphNode()
    // Called from any thread or actor; `isolation` passes the caller's actor on to `post`.
    func spent(_ credits: Int, isolation: isolated (any Actor)? = #isolation) {
        post(as: (any WalletMessages).self) { $0.creditsChanged(to: credits) }
    }
}

@Suite("README examples: Swift concurrency", .timeLimit(.minutes(3)))
@MainActor
struct ReadmeConcurrencyTests {
    @Test("The values snippet: set and update on the main actor reach a main-actor closure at once")
    func valuesSnippet() {
        var printed: [String] = []
        let credits = ObservableValue(0)
        let creditsToken = credits.observeValues { printed.append("credits: \($0)") }
        credits.set(5)
        credits.update { $0 += 10 }
        #expect(printed == ["credits: 0", "credits: 5", "credits: 15"])
        withExtendedLifetime(creditsToken) {}
    }

    @Test("The coalesced array snippet: the first call at once, two appends in one later call")
    func coalescedArraySnippet() async {
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        let rows = ObservableArray<String>()
        let rowsToken = rows.observeValuesCoalesced { change in  // on the main actor
            print(change.array.count, change.changeset)  // 0 no change, at once
        }
        rows.append("Steve")
        rows.append("Tim")  // one call on the main actor's next turn: 2 inserts [0, 1]
        #expect(printed == ["0 no change"])
        #expect(await eventually { printed.count == 2 })
        #expect(printed == ["0 no change", "2 inserts [0, 1]"])
        withExtendedLifetime(rowsToken) {}
    }

    @Test("The shortest view model updates its text from the main actor and from other threads")
    func viewModelSnippet() async {
        let credits = ObservableValue(1)
        let model = CreditsViewModel(credits: credits)
        #expect(model.text == "1 credits")
        credits.set(2)
        #expect(model.text == "2 credits")
        DispatchQueue.global().async { credits.value = 3 }
        _ = await eventually { model.text == "3 credits" }
        #expect(model.text == "3 credits")
    }

    @Test("post reaches a main-actor-isolated conformance from a background thread")
    func postSnippet() async {
        let wallet = PostingWallet()
        let screen = WalletScreen()
        wallet.addObserver(screen)
        DispatchQueue.global().async { wallet.spent(7) }
        _ = await eventually { !screen.text.isEmpty }
        #expect(screen.text == "7 credits")
        wallet.spent(8)  // on the main actor: delivered before post returns
        #expect(screen.text == "8 credits")
    }
}
