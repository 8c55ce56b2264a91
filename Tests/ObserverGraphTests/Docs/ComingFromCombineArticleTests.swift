import Dispatch
import ObserverGraph
import Testing

// The code block of the article "Coming from Combine or RxSwift"
// (ObserverGraph.docc/ComingFromCombineOrRxSwift.md), verbatim: DocSnippetTests fails when a
// block of the article is not found here. Its `print` calls are recorded, and checked against
// its comments.

@Suite("Docs: Coming from Combine or RxSwift")
struct ComingFromCombineArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    @Test("A value, a channel, a queue and a bag, as in Combine")
    func counterparts() {
        let score = ObservableValue(0)  // CurrentValueSubject<Int, Never>, BehaviorRelay<Int>
        let taps = EventChannel<Void>()  // PassthroughSubject<Void, Never>, PublishRelay<Void>
        let ui = DispatchQueue(label: "ui")  // stands in for DispatchQueue.main
        let bag = TokenBag()  // Set<AnyCancellable>, DisposeBag
        score.observeValues(on: ui) { print("score:", $0) }.store(in: bag)  // receive(on:) + sink
        taps.observeValuesNonisolated { _ in score.update { $0 += 1 } }.store(in: bag)  // subscribe(onNext:)
        taps.send()  // on ui: prints "score: 0", then "score: 1"
        ui.sync {}  // the queue is serial: what was queued before this has run
        #expect(output.all == ["score: 0", "score: 1"])
        bag.cancelAll()
        #expect(score.observerCount == 0 && taps.observerCount == 0)
    }
}
