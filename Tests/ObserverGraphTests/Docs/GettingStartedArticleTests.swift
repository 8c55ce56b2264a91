import ObserverGraph
import Testing

// The code blocks of the article "Getting started" (ObserverGraph.docc/GettingStarted.md),
// verbatim: DocSnippetTests fails when a block of the article is not found here. Expectations
// check what the blocks' comments claim.

@Suite("Docs: Getting started")
struct GettingStartedArticleTests {
    /// The message this observable sends.
    protocol WalletObserver {
        func creditsChanged(to credits: Int)
    }

    final class Wallet: GraphObservable {
        let graphNode = GraphNode()  // the one stored property the kit needs
        private(set) var credits = 0

        func increase(by amount: Int) {
            credits += amount
            broadcast(as: (any WalletObserver).self) { $0.creditsChanged(to: credits) }
        }
    }

    final class BalanceLabel: WalletObserver, GraphObserver {
        var text = ""
        func creditsChanged(to credits: Int) { text = "\(credits) credits" }
    }

    struct Logger: GraphObserver, WalletObserver {
        let observerID = ObserverID()
        func creditsChanged(to credits: Int) { print("credits:", credits) }
    }

    final class Dashboard: WalletObserver, GraphTrackingObserver {
        let graphNode = GraphNode()
        var lastSeen = 0
        func creditsChanged(to credits: Int) { lastSeen = credits }
        func didSubscribe(to observable: any GraphObservable) {
            print("watching", observable.graphDisplayName)
        }
    }

    @Test("Class, struct and tracking observers do what the article says")
    func observers() {
        let wallet = Wallet()
        let label = BalanceLabel()
        wallet.addObserver(label)  // returns label; nil if it was already subscribed
        wallet.increase(by: 10)  // label.text == "10 credits"
        #expect(label.text == "10 credits")
        #expect(wallet.addObserver(label) == nil)

        let logger = Logger()
        wallet.addObserver(logger)
        wallet.increase(by: 5)  // prints "credits: 15"
        wallet.removeObserver(logger)  // a copy of logger is the same observer: this removes it
        #expect(!wallet.hasObserver(logger) && wallet.observerCount == 1 && wallet.credits == 15)

        let dashboard = Dashboard()
        dashboard.subscribe(to: wallet)  // true; prints "watching Wallet@...", its default name
        wallet.increase(by: 1)  // dashboard.lastSeen == 16
        print(dashboard.subscriptions.count)  // 1
        dashboard.unsubscribeFromAll()  // returns [wallet]; wallet.hasObserver(dashboard) is false
        #expect(dashboard.lastSeen == 16 && label.text == "16 credits")
        #expect(!wallet.hasObserver(dashboard) && dashboard.subscriptions.isEmpty)

        // The claims again, one by one.
        #expect(dashboard.subscribe(to: wallet) && dashboard.subscriptions.count == 1)
        #expect(wallet.graphDisplayName.hasPrefix("Wallet@"))
        #expect(dashboard.unsubscribeFromAll().map { $0 === wallet } == [true])
        #expect(wallet.addObserver(logger) != nil && wallet.removeObserver(Logger()) == nil)
        #expect(wallet.removeObserver(logger) != nil)
    }
}
