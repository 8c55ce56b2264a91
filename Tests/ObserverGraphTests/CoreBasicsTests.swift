import Foundation
import ObserverGraph
import Testing

@Suite("Core: subscribe, unsubscribe, queries and callbacks")
struct CoreBasicsTests {
    @Test("A single observer: subscribe, query, callbacks, unsubscribe")
    func singleObserver() {
        let log = EventLog()
        let subject = Subject("O", log: log)
        let watcher = Watcher("W", log: log)

        #expect(subject.addObserver(watcher) === watcher)
        #expect(subject.hasObserver(watcher))
        #expect(watcher.isSubscribed(to: subject))
        #expect(names(subject.observers) == ["W"])
        #expect(subject.observerCount == 1)
        #expect(log.all == ["W.didSubscribe(O)", "O.observer(W, true)"])

        log.clear()
        #expect(subject.removeObserver(watcher) === watcher)
        #expect(!subject.hasObserver(watcher))
        #expect(!watcher.isSubscribed(to: subject))
        #expect(subject.observers.isEmpty)
        #expect(log.all == ["W.didUnsubscribe(O)", "O.observer(W, false)"])
    }

    @Test("Many observers keep registration order, also after removals and re-subscribes")
    func manyObserversInOrder() {
        let subject = Subject("O")
        let watchers = (0..<6).map { Watcher("W\($0)") }
        for watcher in watchers { subject.addObserver(watcher) }
        #expect(names(subject.observers) == ["W0", "W1", "W2", "W3", "W4", "W5"])

        subject.removeObserver(watchers[2])
        subject.removeObserver(watchers[4])
        #expect(names(subject.observers) == ["W0", "W1", "W3", "W5"])

        subject.addObserver(watchers[2])
        #expect(names(subject.observers) == ["W0", "W1", "W3", "W5", "W2"])
        var order: [String] = []
        #expect(subject.broadcast(as: Watcher.self) { order.append($0.name) } == 5)
        #expect(order == ["W0", "W1", "W3", "W5", "W2"])
        withExtendedLifetime(watchers) {}  // observables hold observers weakly
    }

    @Test("Order survives compaction of many removed entries")
    func orderAfterCompaction() {
        let subject = Subject("O")
        let watchers = (0..<300).map { Watcher("W\($0)") }
        for watcher in watchers { subject.addObserver(watcher) }
        for (i, watcher) in watchers.enumerated() where i % 3 != 0 { subject.removeObserver(watcher) }
        let expected = watchers.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.name)
        #expect(names(subject.observers) == expected)
        for watcher in watchers { #expect(subject.hasObserver(watcher) == expected.contains(watcher.name)) }
        #expect(GraphNode.consistencyViolations(among: [subject.graphNode]).isEmpty)
    }

    @Test("A duplicate subscribe is refused and fires nothing")
    func duplicateRefused() {
        let log = EventLog()
        let subject = Subject("O", log: log)
        let watcher = Watcher("W", log: log)
        subject.addObserver(watcher)
        log.clear()

        #expect(subject.addObserver(watcher) == nil)
        #expect(!watcher.subscribe(to: subject))
        #expect(subject.observerCount == 1)
        #expect(log.all.isEmpty)
    }

    @Test("Unsubscribing an observer that is not subscribed is refused and fires nothing")
    func unsubscribeUnknown() {
        let log = EventLog()
        let subject = Subject("O", log: log)
        let watcher = Watcher("W", log: log)
        let tracker = Tracker("T", log: log)

        #expect(subject.removeObserver(watcher) == nil)
        #expect(subject.removeObserver(tracker) == nil)
        #expect(!tracker.unsubscribe(from: subject))
        subject.addObserver(watcher)
        subject.removeObserver(watcher)
        log.clear()
        #expect(subject.removeObserver(watcher) == nil)
        #expect(log.all.isEmpty)
    }

    @Test("Struct observers: copies are one observer, distinct ids are distinct")
    func structObservers() {
        let log = EventLog()
        let subject = Subject("O", log: log)
        let first = ValueWatcher(name: "S1", log: log)
        let copy = first
        let second = ValueWatcher(name: "S2", log: log)

        #expect(subject.addObserver(first) != nil)
        #expect(subject.addObserver(copy) == nil)
        #expect(subject.addObserver(second) != nil)
        #expect(subject.hasObserver(copy))
        #expect(second.isSubscribed(to: subject))
        #expect(names(subject.observers) == ["S1", "S2"])
        #expect(subject.broadcast(as: (any Pinged).self) { $0.ping("hello") } == 2)

        #expect(subject.removeObserver(copy) != nil)
        #expect(!subject.hasObserver(first))
        #expect(
            log.all == [
                "S1.didSubscribe(O)", "O.observer(S1, true)",
                "S2.didSubscribe(O)", "O.observer(S2, true)",
                "S1 got hello", "S2 got hello",
                "S1.didUnsubscribe(O)", "O.observer(S1, false)",
            ])
    }

    @Test("A tracking observer knows its subscriptions, in order, from both sides")
    func trackingObserver() {
        let log = EventLog()
        let a = Subject("A", log: log)
        let b = Subject("B", log: log)
        let c = Subject("C", log: log)
        let tracker = Tracker("T", log: log)

        a.addObserver(tracker)
        #expect(tracker.subscribe(to: b))
        c.addObserver(tracker)
        #expect(names(tracker.subscriptions) == ["A", "B", "C"])
        #expect(tracker.subscriptionCount == 3)
        #expect(tracker.isSubscribed(to: b))
        #expect(b.hasObserver(tracker))

        #expect(tracker.unsubscribe(from: b))
        #expect(names(tracker.subscriptions) == ["A", "C"])
        #expect(!b.hasObserver(tracker))
        b.removeObserver(tracker)
        a.removeObserver(tracker)
        #expect(names(tracker.subscriptions) == ["C"])
        #expect(
            log.all == [
                "T.didSubscribe(A)", "A.observer(T, true)",
                "T.didSubscribe(B)", "B.observer(T, true)",
                "T.didSubscribe(C)", "C.observer(T, true)",
                "T.didUnsubscribe(B)", "B.observer(T, false)",
                "T.didUnsubscribe(A)", "A.observer(T, false)",
            ])
        #expect(GraphNode.consistencyViolations(among: nodes([a, b, c, tracker])).isEmpty)
    }

    @Test("The observable's removeAllObservers removes every kind of observer, in order, once each")
    func observableUnsubscribeAll() {
        let log = EventLog()
        let subject = Subject("O", log: log)
        let watcher = Watcher("W", log: log)
        let tracker = Tracker("T", log: log)
        let value = ValueWatcher(name: "S", log: log)
        let hub = Hub("H", log: log)
        subject.addObserver(watcher)
        subject.addObserver(tracker)
        subject.addObserver(value)
        subject.addObserver(hub)
        log.clear()

        #expect(names(subject.removeAllObservers()) == ["W", "T", "S", "H"])
        #expect(
            log.all == [
                "W.didUnsubscribe(O)", "O.observer(W, false)",
                "T.didUnsubscribe(O)", "O.observer(T, false)",
                "S.didUnsubscribe(O)", "O.observer(S, false)",
                "H.didUnsubscribe(O)", "O.observer(H, false)",
            ])
        #expect(subject.observers.isEmpty)
        #expect(tracker.subscriptions.isEmpty)
        #expect(hub.subscriptions.isEmpty)
        #expect(subject.removeAllObservers().isEmpty)
        #expect(GraphNode.consistencyViolations(among: nodes([subject, tracker, hub])).isEmpty)
    }

    @Test("The tracking observer's unsubscribeFromAll leaves every observable, in order, once each")
    func trackerUnsubscribeFromAll() {
        let log = EventLog()
        let a = Subject("A", log: log)
        let b = Subject("B", log: log)
        let hub = Hub("H", log: log)
        let tracker = Tracker("T", log: log)
        let other = Watcher("W", log: log)
        b.addObserver(tracker)
        hub.addObserver(tracker)
        a.addObserver(tracker)
        a.addObserver(other)
        log.clear()

        #expect(names(tracker.unsubscribeFromAll()) == ["B", "H", "A"])
        #expect(
            log.all == [
                "T.didUnsubscribe(B)", "B.observer(T, false)",
                "T.didUnsubscribe(H)", "H.observer(T, false)",
                "T.didUnsubscribe(A)", "A.observer(T, false)",
            ])
        #expect(tracker.subscriptions.isEmpty)
        #expect(names(a.observers) == ["W"])
        #expect(b.observers.isEmpty && hub.observers.isEmpty)
        #expect(tracker.unsubscribeFromAll().isEmpty)
    }

    @Test("An object that is both observable and tracking observer, observing itself and a peer")
    func hubs() {
        let log = EventLog()
        let x = Hub("X", log: log)
        let y = Hub("Y", log: log)
        #expect(x.addObserver(x) != nil)
        #expect(x.addObserver(y) != nil)
        #expect(y.addObserver(x) != nil)
        #expect(names(x.observers) == ["X", "Y"])
        #expect(names(x.subscriptions) == ["X", "Y"])
        #expect(names(y.subscriptions) == ["X"])
        #expect(GraphNode.consistencyViolations(among: nodes([x, y])).isEmpty)

        #expect(names(x.unsubscribeFromAll()) == ["X", "Y"])
        #expect(names(x.observers) == ["Y"])
        #expect(y.observers.isEmpty)
        #expect(GraphNode.consistencyViolations(among: nodes([x, y])).isEmpty)
    }

    @Test("Typed broadcast reaches only observers of the requested type, in order")
    func typedBroadcast() {
        let log = EventLog()
        let subject = Subject("O")
        let watcher = Watcher("W", log: log)
        let tracker = Tracker("T", log: log)
        let value = ValueWatcher(name: "S", log: log)
        let payload = PayloadObserver(payload: Payload(deinits: Counters()))
        subject.addObserver(watcher)
        subject.addObserver(payload)
        subject.addObserver(tracker)
        subject.addObserver(value)
        log.clear()

        #expect(subject.broadcast(as: (any Pinged).self) { $0.ping("1") } == 3)
        #expect(subject.broadcast(as: Tracker.self) { $0.ping("2") } == 1)
        #expect(subject.broadcast(as: PayloadObserver.self) { _ in } == 1)
        #expect(subject.broadcast(as: (any GraphObserver).self) { _ in } == 4)
        #expect(subject.broadcast(as: Subject.self) { _ in } == 0)
        #expect(log.all == ["W got 1", "T got 1", "S got 1", "T got 2"])
    }

    @Test("A throwing broadcast body stops the broadcast; the next one works")
    func throwingBroadcast() {
        struct Stop: Error {}
        let subject = Subject("O")
        let watchers = (0..<4).map { Watcher("W\($0)") }
        for watcher in watchers { subject.addObserver(watcher) }
        var seen: [String] = []
        #expect(throws: Stop.self) {
            try subject.broadcast(as: Watcher.self) { watcher in
                seen.append(watcher.name)
                if watcher.name == "W1" { throw Stop() }
            }
        }
        #expect(seen == ["W0", "W1"])
        // The aborted broadcast left no trace: a removal is still honoured normally.
        seen.removeAll()
        let count = subject.broadcast(as: Watcher.self) { watcher in
            seen.append(watcher.name)
            if watcher.name == "W0" { subject.removeObserver(watchers[2]) }
        }
        #expect(count == 3)
        #expect(seen == ["W0", "W1", "W3"])
    }

    @Test("ObserverID: fresh ids are unique, object ids follow identity")
    func observerIDs() {
        let ids = (0..<1000).map { _ in ObserverID() }
        #expect(Set(ids).count == 1000)
        let object = Watcher("W")
        #expect(ObserverID(object) == object.observerID)
        #expect(ObserverID(object) != ObserverID(Watcher("V")))
        let tracker = Tracker("T")
        #expect(tracker.observerID == ObserverID(tracker.graphNode))
        #expect(ids[0].description.hasPrefix("ObserverID(0x"))
    }

    @Test("Display names: type name and short id by default, one name per object, custom names win")
    func displayNames() {
        func isDefault(_ name: String, of type: String) -> Bool {
            let parts = name.split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && parts[0] == type && parts[1].count == 4
                && parts[1].allSatisfy { "0123456789abcdef".contains($0) }
        }
        let subject = Subject("O")
        let watcher = Watcher("W")
        let tracker = Tracker("T")
        let hub = Hub("H")
        let value = ValueWatcher(name: "V", log: EventLog())
        #expect(isDefault(subject.graphDisplayName, of: "Subject"))
        #expect(isDefault(watcher.graphDisplayName, of: "Watcher"))
        #expect(isDefault(tracker.graphDisplayName, of: "Tracker"))
        #expect(isDefault(hub.graphDisplayName, of: "Hub"))
        #expect(isDefault(value.graphDisplayName, of: "ValueWatcher"))
        #expect(value.graphDisplayName == value.graphDisplayName, "a copy keeps its identity and name")
        #expect((hub as any GraphObserver).graphDisplayName == (hub as any GraphObservable).graphDisplayName)
        #expect(LedgerTracker(index: 1, ledger: Counters()).graphDisplayName.hasPrefix("LedgerTracker@"))
        #expect((CustomNamed() as any GraphObservable).graphDisplayName == "the queue")
        #expect((CustomNamed() as any GraphObserver).graphDisplayName == "the queue")
        let credits = ObservableValue(0)
        let token = credits.observeNonisolated { _ in }
        #expect(isDefault(credits.observers[0].graphDisplayName, of: "closure"))
        #expect(isDefault(credits.graphDisplayName, of: "ObservableValue<Int>"))
        token.cancel()
    }

    @Test("GraphLock serializes its bodies and shares state between copies")
    func graphLock() {
        let lock = GraphLock(0)
        let copy = lock
        race(threads: 4) { _ in
            for _ in 0..<10_000 { copy.withLock { $0 += 1 } }
        }
        #expect(lock.withLock { $0 } == 40_000)
    }

    @Test("A GraphLock with no state guards other data from several threads, with no sanitizer report")
    func graphLockWithoutState() {
        // A zero-sized state lies at the lock object's own address. Under the thread sanitizer, a
        // body's access to it was recorded as a write there, which raced with the next caller's
        // read of the object's type: a report on every contended `GraphLock(())` (CI runs this
        // suite under the sanitizer).
        final class Guarded: @unchecked Sendable {
            let lock = GraphLock(())
            var count = 0
        }
        struct Empty {}
        let guarded = Guarded()
        let empty = GraphLock(Empty())
        race(threads: 4) { _ in
            for _ in 0..<10_000 {
                guarded.lock.withLock { _ in guarded.count += 1 }
                empty.withLock { _ in }
            }
        }
        #expect(guarded.lock.withLock { _ in guarded.count } == 40_000)
    }

    @Test("A contended GraphLock puts waiters to sleep and wakes every one of them")
    func graphLockSleepers() {
        // Holders pause inside their bodies now and then, long enough for the other threads to
        // stop spinning and sleep; eight locks share the waiting table, so a release also wakes
        // sleepers of other locks, who must go back to sleep.
        let locks = (0..<8).map { _ in GraphLock(0) }
        let rounds = 2_000
        race(threads: 4) { thread in
            for round in 0..<rounds {
                locks[(round &* 7 &+ thread) % locks.count].withLock { count in
                    count += 1
                    if round % 250 == 0 { Thread.sleep(forTimeInterval: 0.002) }
                }
            }
        }
        var expected = Array(repeating: 0, count: locks.count)
        for thread in 0..<4 {
            for round in 0..<rounds { expected[(round * 7 + thread) % locks.count] += 1 }
        }
        #expect(locks.map { $0.withLock { $0 } } == expected)
    }
}

private final class CustomNamed: GraphObservable, GraphTrackingObserver {
    let graphNode = GraphNode()
    var graphDisplayName: String { "the queue" }
}
