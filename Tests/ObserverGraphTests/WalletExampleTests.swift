import ObserverGraph
import Testing

/// The wallet service of source document 003, on ObserverGraph: a service object that many parts
/// of an app observe, with no delegate protocol and no global mutable state. Whoever needs the
/// wallet is handed the instance.
final class WalletService: Sendable {
    enum Failure: Error, Equatable {
        case invalidQuantity(Int)
        case insufficientCredits(available: Int, requested: Int)
    }

    /// The credits; observe them to learn about every change.
    let credits: ObservableValue<Int>

    init(initialCredits: Int = 0) {
        credits = ObservableValue(initialCredits)
    }

    func increase(by quantity: Int) throws(Failure) {
        guard quantity > 0 else { throw .invalidQuantity(quantity) }
        credits.update { $0 += quantity }
    }

    /// Spends credits; refuses (and changes and delivers nothing) when there are not enough:
    /// throwing from inside `update` declines the change.
    func use(_ quantity: Int) throws {
        guard quantity > 0 else { throw Failure.invalidQuantity(quantity) }
        try credits.update { credits in
            guard credits >= quantity else {
                throw Failure.insufficientCredits(available: credits, requested: quantity)
            }
            credits -= quantity
        }
    }
}

@Suite("Example: the wallet service of source document 003")
struct WalletExampleTests {
    @Test("Several subscribers see every change; refused operations change and deliver nothing")
    func severalSubscribers() throws {
        let wallet = WalletService()
        let log = EventLog()
        let bag = TokenBag()
        wallet.credits.observeValuesNonisolated { log.append("\($0)") }.store(in: bag)
        wallet.credits.observeValuesNonisolated { log.append("Second: \($0)") }.store(in: bag)

        try wallet.increase(by: 10)
        try wallet.use(5)
        #expect(throws: WalletService.Failure.insufficientCredits(available: 5, requested: 6)) {
            try wallet.use(6)
        }
        #expect(throws: WalletService.Failure.invalidQuantity(-1)) { try wallet.increase(by: -1) }
        #expect(log.all == ["0", "Second: 0", "10", "Second: 10", "5", "Second: 5"])
        #expect(wallet.credits.value == 5)
        #expect(wallet.credits.observerCount == 2)
        bag.cancelAll()
        #expect(wallet.credits.observerCount == 0)
    }

    @Test("Spending from many threads never overdraws and never loses a change")
    func concurrentSpending() {
        let wallet = WalletService(initialCredits: 1_000)
        let refused = Counters()
        race(threads: 4) { _ in
            for _ in 0..<400 {
                do { try wallet.use(1) } catch { refused.bump("refused") }
            }
        }
        #expect(wallet.credits.value == 0)
        #expect(refused["refused"] == 600)
    }
}
