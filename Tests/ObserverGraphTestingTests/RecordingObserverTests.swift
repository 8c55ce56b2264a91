import Dispatch
import ObserverGraph
import ObserverGraphTesting
import Testing

private struct Gone: Error {}

/// A core observable with its own message, as in the README's quick start.
private protocol CreditsObserver {
    func creditsChanged(to credits: Int)
}

private final class Wallet: GraphObservable, @unchecked Sendable {
    let graphNode = GraphNode()
    var graphDisplayName: String { "wallet" }
    private(set) var credits = 0

    func increase(by amount: Int) {
        credits += amount
        broadcast(as: (any CreditsObserver).self) { $0.creditsChanged(to: credits) }
    }
}

/// A recorder hears the wallet's own message once it conforms to it.
extension RecordingObserver: CreditsObserver where Value == Int {
    fileprivate func creditsChanged(to credits: Int) { record(.value(credits)) }
}

@Suite("Recording observers: histories and marble rows from both layers of the kit")
struct RecordingObserverTests {
    @Test("An observable value: current value, changes at their steps, termination")
    func observableValue() throws {
        let clock = VirtualClock()
        let done = ObservableValue(true)
        let recorder = RecordingObserver<Bool>(clock: clock, name: "item.Done")
        recorder.record(done)
        clock.schedule(at: 3) { done.value = false }
        clock.schedule(at: 4) { done.value = false }
        clock.schedule(at: 6) { done.finish() }
        clock.schedule(at: 8) { done.value = true }
        clock.run()
        #expect(
            recorder.history == [
                .value(true, at: 0), .value(false, at: 3), .value(false, at: 4), .finished(at: 6),
            ])
        #expect(recorder.events == [.value(true), .value(false), .value(false), .finished])
        let row = recorder.marbleRow { $0 ? "T" : "F" }
        #expect(MarbleDiagram(row).text == "item.Done: T--FF-|->")
        try MarbleDiagram(row).verify(matches: "item.Done: T--FF-|->")
        // By default values are shown by their description: multi-character ones in brackets.
        #expect(MarbleDiagram(recorder.marbleRow(label: "")).text == "[true]--[false][false]-|->")
    }

    @Test("An event channel: values, an error, and an open row that runs to the current step")
    func eventChannel() {
        let clock = VirtualClock()
        let taps = EventChannel<Int>()
        let failing = EventChannel<Int>()
        let open = RecordingObserver<Int>(clock: clock, name: "taps")
        let failed = RecordingObserver<Int>(clock: clock, name: "failing")
        open.record(taps)
        failed.record(failing)
        clock.schedule(at: 1) { taps.send(1) }
        clock.schedule(at: 2) {
            taps.send(2)
            taps.send(12)
            failing.send(7)
        }
        clock.schedule(at: 4) { failing.fail(Gone()) }
        clock.advance(to: 6)
        #expect(open.history == [.value(1, at: 1), .value(2, at: 2), .value(12, at: 2)])
        #expect(failed.history == [.value(7, at: 2), .failed(Gone(), at: 4)])
        #expect(failed.history != [.value(7, at: 2), .failed(CancellationError(), at: 4)])
        #expect(
            MarbleDiagram(open.marbleRow(), failed.marbleRow()).text == """
                taps   : -1(2[12])----->
                failing: --7-------X->
                """)
    }

    @Test("Core callbacks and broadcasts: ^ when subscribed, values, ! when unsubscribed")
    func coreCallbacks() {
        let clock = VirtualClock()
        let wallet = Wallet()
        let label = RecordingObserver<Int>(clock: clock, name: "label")
        clock.schedule(at: 1) { wallet.addObserver(label) }
        clock.schedule(at: 3) { wallet.increase(by: 5) }
        clock.schedule(at: 4) {
            wallet.increase(by: 10)
            wallet.removeObserver(label)
        }
        clock.schedule(at: 5) { wallet.increase(by: 1) }
        clock.advance(to: 6)
        #expect(
            label.history == [
                .subscribed(to: "wallet", at: 1), .value(5, at: 3), .value(15, at: 4),
                .unsubscribed(from: "wallet", at: 4),
            ])
        #expect(label.subscriptions.isEmpty)
        #expect(MarbleDiagram(label.marbleRow()).text == "label: -^-5([15]!)--->")
        #expect(
            label.history.map(\.description) == [
                "subscribed(to: wallet) at 1", "value(5) at 3", "value(15) at 4",
                "unsubscribed(from: wallet) at 4",
            ])

        // A callbacks-only recorder, as a tracking observer of two observables.
        let watcher = RecordingObserver<Never>(clock: clock, name: "watcher")
        let prices = ObservableValue(1)
        wallet.addObserver(watcher)
        prices.addObserver(watcher)
        clock.advance()
        watcher.unsubscribeFromAll()
        #expect(
            watcher.history == [
                .subscribed(to: "wallet", at: 6), .subscribed(to: prices.graphDisplayName, at: 6),
                .unsubscribed(from: "wallet", at: 7), .unsubscribed(from: prices.graphDisplayName, at: 7),
            ])
        #expect(MarbleDiagram(watcher.marbleRow()).text == "watcher: ------(^^)(!!)->")
    }

    @Test("cancel() stops recording sources; the default name is the type name and a short id")
    func cancelAndName() {
        let clock = VirtualClock()
        let count = ObservableValue(0)
        let recorder = RecordingObserver<Int>(clock: clock)
        recorder.record(count)
        #expect(count.observerCount == 1)
        recorder.cancel()
        count.value = 1
        #expect(recorder.history == [.value(0, at: 0)])
        #expect(count.observerCount == 0)
        #expect(recorder.graphDisplayName == "RecordingObserver<Int>@" + recorder.observerID.shortID)
        #expect(recorder.marbleRow().label == recorder.graphDisplayName)
    }

    @Test("Recording from several threads at once loses nothing")
    func concurrentRecording() {
        let clock = VirtualClock()
        let channel = EventChannel<Int>()
        let recorder = RecordingObserver<Int>(clock: clock)
        recorder.record(channel)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<500 {
                if i % 2 == 0 { channel.send(thread * 1_000 + i) } else { recorder.record(.value(-1)) }
            }
        }
        #expect(recorder.history.count == 2_000)
        #expect(recorder.events.filter { $0 == .value(-1) }.count == 1_000)
        for thread in 0..<4 {
            let sent = recorder.events.compactMap(\.value).filter {
                $0 >= thread * 1_000 && $0 < thread * 1_000 + 500
            }
            #expect(
                sent == Array(stride(from: thread * 1_000, to: thread * 1_000 + 500, by: 2)),
                "in order per sender")
        }
    }

    @Test("The source document's queue, recorded: add, subscribe, done = false removes and cancels")
    func sourceDocumentQueue() throws {
        let clock = VirtualClock()
        let items = ObservableValue<[String]>([])
        let done = ObservableValue(true)
        let queue = RecordingObserver<[String]>(clock: clock, name: "queue")
        let itemDone = RecordingObserver<Bool>(clock: clock, name: "item.Done")
        let removals = RecordingObserver<String>(clock: clock, name: "remove(itemA)")
        queue.record(items)
        let subscription = GraphLock<SubscriptionToken?>(nil)
        clock.schedule(at: 2) { items.update { $0.append("itemA") } }
        clock.schedule(at: 3) {
            itemDone.record(done)
            // The queue manager: an item that is no longer done leaves the queue.
            let token = done.observeValuesNonisolated { isDone in
                guard !isDone else { return }
                items.update { $0.removeAll { $0 == "itemA" } }
                removals.record(.value("O"))
                subscription.withLock { $0 }?.cancel()
            }
            subscription.withLock { $0 = token }
        }
        clock.schedule(at: 9) { done.value = false }
        clock.schedule(at: 11) { done.fail(Gone()) }
        clock.run()
        let diagram = MarbleDiagram(
            queue.marbleRow { $0.joined(separator: ",") },
            itemDone.marbleRow { $0 ? "T" : "F" },
            removals.marbleRow())
        try diagram.verify(
            matches: """
                queue        : []-[itemA]------[]--->
                item.Done    : ----------T-----F--X->
                remove(itemA): ----------------O---->
                """)
    }
}
