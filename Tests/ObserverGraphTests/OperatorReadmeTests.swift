import ObserverGraph
import Testing

@Suite("README: operators")
struct OperatorReadmeTests {
    @Test("The operators example does what its comments say")
    func operatorsExample() {
        let lines = EventLog()
        @Sendable func print(_ label: String, _ value: Bool) { lines.append("\(label) \(value)") }

        // The README block, verbatim; the history below checks each of its comments.
        let credits = ObservableValue(0)
        let price = ObservableValue(30)
        let canBuy = credits.combineLatest(price).map { $0 >= $1 }.removeDuplicates()
        let token = canBuy.observeValuesNonisolated { print("can buy:", $0) }  // can buy: false
        credits.value = 50  // can buy: true
        price.value = 40  // nothing: still true
        credits.value = 20  // can buy: false
        #expect(lines.all == ["can buy: false", "can buy: true", "can buy: false"])
        withExtendedLifetime(token) {}
    }
}
