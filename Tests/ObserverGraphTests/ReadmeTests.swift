import ObserverGraph
import Testing

// The README's quick start, verbatim: DocSnippetTests fails when a block of README.md is not
// found here. Its types are nested in the suite; its statements run in `quickStart`, followed by
// expectations that check what its comments claim. Its `print` calls are recorded.

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

    @Test("The quick start does what its comments say")
    func quickStart() {
        let wallet = Wallet()
        let label = BalanceLabel()  // observables hold observers weakly: keep it alive
        wallet.addObserver(label)
        wallet.increase(by: 10)  // label.text == "10 credits"
        #expect(label.text == "10 credits")
        #expect(wallet.observers.map { $0 as AnyObject }.elementsEqual([label]) { $0 === $1 })

        let balance = ObservableValue(0)  // a value with closure observers
        let token = balance.observeValues { print("balance:", $0) }  // prints "balance: 0" at once
        balance.value = 5  // prints "balance: 5"; token.cancel() ends the observation
        #expect(output.all == ["balance: 0", "balance: 5"])
        token.cancel()
        balance.value = 6
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
