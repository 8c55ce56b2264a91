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
