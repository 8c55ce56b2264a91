import Dispatch
import ObserverGraph
import Testing

// The README's quick start, verbatim where it can be, with its comments turned into expectations.

private protocol WalletObserver {
    func creditsChanged(to credits: Int)
}

private final class Wallet: GraphObservable {
    let graphNode = GraphNode()
    private(set) var credits = 0

    func increase(by amount: Int) {
        credits += amount
        broadcast(as: (any WalletObserver).self) { $0.creditsChanged(to: credits) }
    }
}

private final class BalanceLabel: WalletObserver, GraphObserver {
    var text = ""
    func creditsChanged(to credits: Int) { text = "\(credits) credits" }
}

private final class Dashboard: WalletObserver, GraphTrackingObserver {
    let graphNode = GraphNode()
    var lastSeen = 0
    func creditsChanged(to credits: Int) { lastSeen = credits }
}

private struct Logger: GraphObserver, WalletObserver {
    let observerID = ObserverID()
    let lines: EventLog
    func creditsChanged(to credits: Int) { lines.append("credits: \(credits)") }
}

@Suite("README examples")
struct ReadmeTests {
    @Test("The quick start does what its comments say")
    func quickStart() {
        let wallet = Wallet()
        let label = BalanceLabel()
        let dashboard = Dashboard()
        wallet.addObserver(label)
        wallet.addObserver(dashboard)
        wallet.increase(by: 10)
        #expect(label.text == "10 credits")
        #expect(dashboard.lastSeen == 10)
        #expect(dashboard.subscriptions.count == 1)
        dashboard.unsubscribeFromAll()
        #expect(wallet.observers.map { $0 as AnyObject }.elementsEqual([label]) { $0 === $1 })

        let lines = EventLog()
        wallet.addObserver(Logger(lines: lines))
        wallet.increase(by: 5)
        #expect(lines.all == ["credits: 15"])
        #expect(label.text == "15 credits" && dashboard.lastSeen == 10)
    }

    /// The contract a conforming type must meet, as a test you can paste next to your own types:
    /// replace `Wallet` and `BalanceLabel` with them.
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

// The README's "Swift concurrency" section, verbatim, run on the main actor as an app runs it.

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

@Suite("README examples: Swift concurrency", .timeLimit(.minutes(1)))
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

    @Test("The shortest view model updates its text from the main actor and from other threads")
    func viewModelSnippet() async {
        let credits = ObservableValue(1)
        let model = CreditsViewModel(credits: credits)
        #expect(model.text == "1 credits")
        credits.set(2)
        #expect(model.text == "2 credits")
        DispatchQueue.global().async { credits.value = 3 }
        let deadline = ContinuousClock.now + .seconds(10)
        while model.text != "3 credits", ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(model.text == "3 credits")
    }

    @Test("post reaches a main-actor-isolated conformance from a background thread")
    func postSnippet() async {
        let wallet = PostingWallet()
        let screen = WalletScreen()
        wallet.addObserver(screen)
        DispatchQueue.global().async { wallet.spent(7) }
        let deadline = ContinuousClock.now + .seconds(10)
        while screen.text.isEmpty, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(screen.text == "7 credits")
        wallet.spent(8)  // on the main actor: delivered before post returns
        #expect(screen.text == "8 credits")
    }
}
