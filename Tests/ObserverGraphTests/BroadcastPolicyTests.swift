import ObserverGraph
import Testing

/// Promises of the README's reentrancy policy that no other suite covers on its own.
@Suite("Core: broadcast policy for observers removed and added back during the broadcast")
struct BroadcastPolicyTests {
    @Test("A class observer removed and subscribed again during a broadcast is still called by it")
    func classObserverBackInTheSameBroadcast() {
        let log = EventLog()
        let subject = Subject("O")
        let first = Watcher("A", log: log)
        let second = Watcher("B", log: log)
        subject.addObserver(first)
        subject.addObserver(second)
        log.clear()
        var once = false
        let reached = subject.broadcast(as: Watcher.self) { watcher in
            watcher.ping("x")
            guard !once else { return }
            once = true
            subject.removeObserver(second)
            subject.addObserver(second)  // back, now at the end of the list
        }
        #expect(reached == 2)
        #expect(log.all == ["A got x", "B.didUnsubscribe(O)", "B.didSubscribe(O)", "B got x"])
        #expect(names(subject.observers) == ["A", "B"])
    }

    @Test("A struct observer removed and subscribed again during a broadcast counts as new: not called")
    func structObserverBackInTheSameBroadcast() {
        let log = EventLog()
        let subject = Subject("O")
        let first = ValueWatcher(name: "S1", log: log)
        let second = ValueWatcher(name: "S2", log: log)
        subject.addObserver(first)
        subject.addObserver(second)
        log.clear()
        var once = false
        let reached = subject.broadcast(as: ValueWatcher.self) { watcher in
            watcher.ping("x")
            guard !once else { return }
            once = true
            subject.removeObserver(second)
            subject.addObserver(second)
        }
        #expect(reached == 1)
        #expect(log.all == ["S1 got x", "S2.didUnsubscribe(O)", "S2.didSubscribe(O)"])
        log.clear()
        #expect(subject.broadcast(as: ValueWatcher.self) { $0.ping("y") } == 2)
        #expect(log.all == ["S1 got y", "S2 got y"])
    }
}
