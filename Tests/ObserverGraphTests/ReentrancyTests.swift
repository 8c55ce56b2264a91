import ObserverGraph
import Testing

/// An observer whose reaction to a ping is a closure, so tests can script reentrant behaviour.
final class Reactor: GraphObserver, Named, ScriptRunner, @unchecked Sendable {
    let name: String
    let log: EventLog
    var onPing: ((Reactor) -> Void)?
    var onSubscribe: ((any GraphObservable) -> Void)?
    var onUnsubscribe: ((any GraphObservable) -> Void)?

    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func dropScripts() {
        onPing = nil
        onSubscribe = nil
        onUnsubscribe = nil
    }

    func ping(_ tag: String) {
        log.append("\(name) got \(tag)")
        onPing?(self)
    }

    func didSubscribe(to observable: any GraphObservable) {
        log.append("\(name).didSubscribe(\(nameOf(observable)))")
        onSubscribe?(observable)
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log.append("\(name).didUnsubscribe(\(nameOf(observable)))")
        onUnsubscribe?(observable)
    }
}

@Suite("Core: reentrancy from broadcast bodies and callbacks")
struct ReentrancyTests {
    let log = EventLog()
    /// Observables hold observers weakly: the suite keeps its reactors alive for the whole test
    /// (optimized builds end a local's lifetime at its last use).
    let keep = ScriptKeeper()

    func reactors(_ count: Int, on subject: Subject) -> [Reactor] {
        let reactors = (0..<count).map { Reactor("R\($0)", log: log) }
        keep.keep(reactors)
        for reactor in reactors { subject.addObserver(reactor) }
        log.clear()
        return reactors
    }

    @Test("An observer removed by an earlier observer's body is not called by that broadcast")
    func removeLaterObserver() {
        let subject = Subject("O")
        let r = reactors(4, on: subject)
        r[0].onPing = { _ in subject.removeObserver(r[2]) }
        let delivered = subject.broadcast(as: Reactor.self) { $0.ping("x") }
        #expect(delivered == 3)
        #expect(log.all == ["R0 got x", "R2.didUnsubscribe(O)", "R1 got x", "R3 got x"])
        #expect(names(subject.observers) == ["R0", "R1", "R3"])
    }

    @Test("An observer may unsubscribe itself; the broadcast goes on to the others")
    func removeSelf() {
        let subject = Subject("O")
        let r = reactors(3, on: subject)
        r[1].onPing = { me in subject.removeObserver(me) }
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("x") } == 3)
        #expect(log.all == ["R0 got x", "R1 got x", "R1.didUnsubscribe(O)", "R2 got x"])
        log.clear()
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("y") } == 2)
        #expect(log.all == ["R0 got y", "R2 got y"])
    }

    @Test("removeAllObservers from a body: nobody after it is called")
    func unsubscribeAllInBody() {
        let subject = Subject("O")
        let r = reactors(4, on: subject)
        r[1].onPing = { _ in subject.removeAllObservers() }
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("x") } == 2)
        #expect(
            log.all == [
                "R0 got x", "R1 got x",
                "R0.didUnsubscribe(O)", "R1.didUnsubscribe(O)", "R2.didUnsubscribe(O)",
                "R3.didUnsubscribe(O)",
            ])
    }

    @Test("An observer added during a broadcast is not called by it, but by the next one")
    func addDuringBroadcast() {
        let subject = Subject("O")
        let r = reactors(2, on: subject)
        let late = Reactor("Late", log: log)
        keep.keep(late)
        r[0].onPing = { _ in subject.addObserver(late) }
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("x") } == 2)
        #expect(log.all == ["R0 got x", "Late.didSubscribe(O)", "R1 got x"])
        log.clear()
        r[0].onPing = nil
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("y") } == 3)
        #expect(log.all == ["R0 got y", "R1 got y", "Late got y"])
    }

    @Test("A body may broadcast again: nested broadcasts run depth-first, in order")
    func nestedBroadcast() {
        let subject = Subject("O")
        let r = reactors(3, on: subject)
        var depth = 0
        r[1].onPing = { _ in
            guard depth == 0 else { return }
            depth += 1
            subject.broadcast(as: Reactor.self) { $0.ping("inner") }
            depth -= 1
        }
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("outer") } == 3)
        #expect(
            log.all == [
                "R0 got outer", "R1 got outer",
                "R0 got inner", "R1 got inner", "R2 got inner",
                "R2 got outer",
            ])
    }

    @Test("A removal inside a nested broadcast is honoured by the outer one too")
    func removalInNestedBroadcast() {
        let subject = Subject("O")
        let r = reactors(4, on: subject)
        r[0].onPing = { _ in
            r[0].onPing = nil
            subject.broadcast(as: Reactor.self) { reactor in
                reactor.ping("inner")
                if reactor === r[1] { subject.removeObserver(r[3]) }
            }
        }
        subject.broadcast(as: Reactor.self) { $0.ping("outer") }
        #expect(
            log.all == [
                "R0 got outer",
                "R0 got inner", "R1 got inner", "R3.didUnsubscribe(O)", "R2 got inner",
                "R1 got outer", "R2 got outer",
            ])
    }

    @Test("A removal on a different observable does not disturb this broadcast")
    func removalElsewhere() {
        let subject = Subject("O")
        let other = Subject("P")
        let r = reactors(3, on: subject)
        other.addObserver(r[2])
        log.clear()
        r[0].onPing = { _ in other.removeObserver(r[2]) }
        #expect(subject.broadcast(as: Reactor.self) { $0.ping("x") } == 3)
        #expect(log.all == ["R0 got x", "R2.didUnsubscribe(P)", "R1 got x", "R2 got x"])
    }

    @Test("Callbacks may change the graph: each callback still fires exactly once")
    func callbacksChangeTheGraph() {
        let subject = Subject("O", log: log)
        let a = Reactor("A", log: log)
        let b = Reactor("B", log: log)
        keep.keep(a, b)
        // A pulls B in when it joins, and leaves again as soon as B arrives.
        a.onSubscribe = { observable in (observable as! Subject).addObserver(b) }
        b.onSubscribe = { observable in (observable as! Subject).removeObserver(a) }
        subject.addObserver(a)
        #expect(
            log.all == [
                // Changes made inside a callback of O wait for it: O hears of each change in
                // the order the changes took effect.
                "A.didSubscribe(O)", "O.observer(A, true)",
                "B.didSubscribe(O)", "O.observer(B, true)",
                "A.didUnsubscribe(O)", "O.observer(A, false)",
            ])
        #expect(names(subject.observers) == ["B"])
        #expect(log.count("A.didSubscribe(O)") == 1 && log.count("A.didUnsubscribe(O)") == 1)
    }

    @Test("An unsubscribe callback may re-subscribe: the edge is back, callbacks balanced")
    func resubscribeFromCallback() {
        let subject = Subject("O")
        let a = Reactor("A", log: log)
        keep.keep(a)
        var rejoined = false
        a.onUnsubscribe = { observable in
            guard !rejoined else { return }
            rejoined = true
            (observable as! Subject).addObserver(a)
        }
        subject.addObserver(a)
        subject.removeAllObservers()
        #expect(subject.hasObserver(a))
        #expect(log.all == ["A.didSubscribe(O)", "A.didUnsubscribe(O)", "A.didSubscribe(O)"])
    }

    @Test("A tracking observer's callbacks may walk and change its own subscriptions")
    func trackerCallbacksReenter() {
        let log = EventLog()
        let a = Subject("A", log: log)
        let b = Subject("B", log: log)
        final class Leaver: GraphTrackingObserver, Named, @unchecked Sendable {
            let graphNode = GraphNode()
            let name = "L"
            let log: EventLog
            init(log: EventLog) { self.log = log }
            func didUnsubscribe(from observable: any GraphObservable) {
                log.append("L left \(nameOf(observable)), still in \(names(subscriptions))")
                if subscriptionCount > 0 { unsubscribeFromAll() }
            }
        }
        let leaver = Leaver(log: log)
        a.addObserver(leaver)
        b.addObserver(leaver)
        log.clear()
        a.removeObserver(leaver)
        #expect(
            log.all == [
                "L left A, still in [\"B\"]",
                "L left B, still in []",
                "B.observer(L, false)",
                "A.observer(L, false)",
            ])
        #expect(a.observers.isEmpty && b.observers.isEmpty && leaver.subscriptions.isEmpty)
    }
}
