import Foundation
import ObserverGraph
import Testing

/// An observable that keeps its member list from its own callbacks only, the way an app would
/// (RVS_GeneralObserver's sharp edge: a member that left must not stay listed).
final class MemberBook: GraphObservable, Named, @unchecked Sendable {
    let graphNode = GraphNode()
    let name: String
    let log: EventLog
    /// The members, and every callback that contradicted them (joined twice, left without joining).
    private let book = GraphLock<(members: Set<ObserverID>, contradictions: Int)>(([], 0))

    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        log.append("\(name).observer(\(nameOf(observer)), \(subscribed))")
        let id = observer.observerID
        book.withLock { book in
            let changed = subscribed ? book.members.insert(id).inserted : book.members.remove(id) != nil
            if !changed { book.contradictions += 1 }
        }
    }

    var members: Set<ObserverID> { book.withLock { $0.members } }
    var contradictions: Int { book.withLock { $0.contradictions } }
    /// The identities the kit lists right now.
    var listed: Set<ObserverID> { Set(observers.map(\.observerID)) }
}

/// An observer (plain class, tracking class or struct) that runs a script from its callbacks.
final class Scripted: GraphTrackingObserver, Named, ScriptRunner, @unchecked Sendable {
    let graphNode = GraphNode()
    let name: String
    let log: EventLog
    var onSubscribe: ((any GraphObservable) -> Void)?
    var onUnsubscribe: ((any GraphObservable) -> Void)?

    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func dropScripts() {
        onSubscribe = nil
        onUnsubscribe = nil
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

final class ScriptedPlain: GraphObserver, Named, ScriptRunner, @unchecked Sendable {
    let name: String
    let log: EventLog
    var onSubscribe: ((any GraphObservable) -> Void)?

    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func dropScripts() { onSubscribe = nil }

    func didSubscribe(to observable: any GraphObservable) {
        log.append("\(name).didSubscribe(\(nameOf(observable)))")
        onSubscribe?(observable)
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log.append("\(name).didUnsubscribe(\(nameOf(observable)))")
    }
}

@Suite("Core: callback order follows the order the changes took effect")
struct CallbackOrderTests {
    let log = EventLog()
    let keep = ScriptKeeper()

    /// How the observer leaves from inside its own `didSubscribe(to:)`.
    enum Exit: String, CaseIterable, CustomTestStringConvertible {
        case removeObserver, unsubscribeFrom, removeAllObservers, unsubscribeFromAll
        var testDescription: String { rawValue }
    }

    @Test(
        "A tracking observer that leaves inside its didSubscribe: joined, then left", arguments: Exit.allCases
    )
    func trackerLeavesInDidSubscribe(exit: Exit) {
        let book = MemberBook("O", log: log)
        let observer = Scripted("A", log: log)
        keep.keep(observer)
        observer.onSubscribe = { observable in
            switch exit {
            case .removeObserver: observable.removeObserver(observer)
            case .unsubscribeFrom: observer.unsubscribe(from: observable)
            case .removeAllObservers: observable.removeAllObservers()
            case .unsubscribeFromAll: observer.unsubscribeFromAll()
            }
        }
        #expect(book.addObserver(observer) != nil)
        #expect(
            log.all == [
                "A.didSubscribe(O)", "O.observer(A, true)", "A.didUnsubscribe(O)", "O.observer(A, false)",
            ])
        #expect(book.members.isEmpty && book.listed.isEmpty && observer.subscriptions.isEmpty)
        #expect(book.contradictions == 0)
    }

    @Test("A plain observer that unsubscribes inside its didSubscribe: joined, then left")
    func plainLeavesInDidSubscribe() {
        let book = MemberBook("O", log: log)
        let observer = ScriptedPlain("P", log: log)
        keep.keep(observer)
        observer.onSubscribe = { observer.unsubscribe(from: $0) }
        #expect(observer.subscribe(to: book))
        #expect(
            log.all == [
                "P.didSubscribe(O)", "O.observer(P, true)", "P.didUnsubscribe(O)", "O.observer(P, false)",
            ])
        #expect(book.members.isEmpty && book.listed.isEmpty)
        withExtendedLifetime(observer) {}
    }

    @Test("A struct observer that unsubscribes inside its didSubscribe: joined, then left")
    func structLeavesInDidSubscribe() {
        struct Leaver: GraphObserver {
            let observerID = ObserverID()
            let log: EventLog
            func didSubscribe(to observable: any GraphObservable) {
                log.append("S.didSubscribe(\(nameOf(observable)))")
                unsubscribe(from: observable)
            }
            func didUnsubscribe(from observable: any GraphObservable) {
                log.append("S.didUnsubscribe(\(nameOf(observable)))")
            }
        }
        let book = MemberBook("O", log: log)
        #expect(book.addObserver(Leaver(log: log)) != nil)
        #expect(
            log.all == [
                "S.didSubscribe(O)", "O.observer(Leaver, true)", "S.didUnsubscribe(O)",
                "O.observer(Leaver, false)",
            ])
        #expect(book.members.isEmpty && book.listed.isEmpty)
    }

    @Test("An observer that re-subscribes inside its didUnsubscribe: left, then joined again")
    func rejoinInDidUnsubscribe() {
        let book = MemberBook("O", log: log)
        let observer = Scripted("A", log: log)
        keep.keep(observer)
        var rejoined = false
        observer.onUnsubscribe = { observable in
            guard !rejoined else { return }
            rejoined = true
            observer.subscribe(to: observable)
        }
        book.addObserver(observer)
        book.removeObserver(observer)
        #expect(
            log.all == [
                "A.didSubscribe(O)", "O.observer(A, true)",
                "A.didUnsubscribe(O)", "O.observer(A, false)",
                "A.didSubscribe(O)", "O.observer(A, true)",
            ])
        #expect(book.members == [observer.observerID] && book.listed == book.members)
        #expect(names(observer.subscriptions) == ["O"])
    }

    @Test("The observable's own callback may remove and re-add: every change reported in order")
    func observableCallbackChurns() {
        final class Bouncer: GraphObservable, Named, @unchecked Sendable {
            let graphNode = GraphNode()
            let name = "B"
            let log: EventLog
            var bounces = 0
            init(log: EventLog) { self.log = log }
            func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
                log.append("B.observer(\(nameOf(observer)), \(subscribed))")
                guard bounces < 2 else { return }
                bounces += 1
                if subscribed { removeObserver(observer) } else { addObserver(observer) }
            }
        }
        let bouncer = Bouncer(log: log)
        let observer = Scripted("A", log: log)
        keep.keep(observer)
        bouncer.addObserver(observer)
        #expect(
            log.all == [
                "A.didSubscribe(B)", "B.observer(A, true)",
                "A.didUnsubscribe(B)", "B.observer(A, false)",
                "A.didSubscribe(B)", "B.observer(A, true)",
            ])
        #expect(bouncer.hasObserver(observer) && names(observer.subscriptions) == ["B"])
    }

    @Test("A change of another observable from inside a callback is delivered at once (nested)")
    func otherObservableNests() {
        let first = MemberBook("O", log: log)
        let second = MemberBook("P", log: log)
        let observer = Scripted("A", log: log)
        keep.keep(observer)
        observer.onSubscribe = { observable in
            if observable === first { observer.subscribe(to: second) }
        }
        first.addObserver(observer)
        #expect(
            log.all == [
                "A.didSubscribe(O)", "A.didSubscribe(P)", "P.observer(A, true)", "O.observer(A, true)",
            ])
        #expect(names(observer.subscriptions) == ["O", "P"])
    }

    @Test("Several observers joining and leaving from callbacks: the book matches the graph")
    func chainedScripts() {
        let book = MemberBook("O", log: log)
        let a = Scripted("A", log: log)
        let b = Scripted("B", log: log)
        let c = ScriptedPlain("C", log: log)
        keep.keep(a, b, c)
        // A pulls B in; B pushes A out and pulls C in; C leaves at once.
        a.onSubscribe = { _ in book.addObserver(b) }
        b.onSubscribe = { _ in
            book.removeObserver(a)
            book.addObserver(c)
        }
        c.onSubscribe = { _ in book.removeObserver(c) }
        book.addObserver(a)
        #expect(
            log.all == [
                "A.didSubscribe(O)", "O.observer(A, true)",
                "B.didSubscribe(O)", "O.observer(B, true)",
                "A.didUnsubscribe(O)", "O.observer(A, false)",
                "C.didSubscribe(O)", "O.observer(C, true)",
                "C.didUnsubscribe(O)", "O.observer(C, false)",
            ])
        #expect(book.members == [b.observerID] && book.listed == book.members && book.contradictions == 0)
        withExtendedLifetime([a, b, c] as [AnyObject]) {}
    }

    @Test("removeAllObservers while a callback adds an observer midway: reported in the order of effect")
    func removeAllWithAJoinMidway() {
        let book = MemberBook("O", log: log)
        let first = Scripted("R0", log: log)
        let second = Scripted("R1", log: log)
        let late = Scripted("X", log: log)
        keep.keep(first, second, late)
        book.addObserver(first)
        book.addObserver(second)
        first.onUnsubscribe = { observable in observable.addObserver(late) }
        log.clear()
        #expect(names(book.removeAllObservers()) == ["R0", "R1"])
        #expect(
            log.all == [
                "R0.didUnsubscribe(O)", "O.observer(R0, false)",
                "X.didSubscribe(O)", "O.observer(X, true)",
                "R1.didUnsubscribe(O)", "O.observer(R1, false)",
            ])
        #expect(book.members == [late.observerID] && book.listed == book.members && book.contradictions == 0)
    }

    @Test(
        "A change made on another thread during a callback waits for it, and its call returns at once",
        .timeLimit(.minutes(3)))
    func handOffToTheDeliveringThread() {
        let book = MemberBook("O", log: log)
        let first = Scripted("X", log: log)
        let second = Scripted("Y", log: log)
        keep.keep(first, second)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let deliveredOn = GraphLock<[String: Thread]>([:])
        first.onSubscribe = { _ in
            deliveredOn.withLock { $0["X"] = Thread.current }
            entered.signal()
            _ = release.wait(timeout: .now() + 20)
        }
        second.onSubscribe = { _ in deliveredOn.withLock { $0["Y"] = Thread.current } }
        let done = DispatchSemaphore(value: 0)
        Thread {
            book.addObserver(first)
            done.signal()
        }.start()
        #expect(entered.wait(timeout: .now() + 20) == .success)
        #expect(book.addObserver(second) != nil, "added at once")
        #expect(book.hasObserver(second))
        #expect(log.all == ["X.didSubscribe(O)"], "Y's callbacks wait for X's")
        release.signal()
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(
            log.all == [
                "X.didSubscribe(O)", "O.observer(X, true)", "Y.didSubscribe(O)", "O.observer(Y, true)",
            ])
        #expect(deliveredOn.withLock { $0["X"] === $0["Y"] }, "delivered by the thread already delivering")
        #expect(book.members == book.listed && book.contradictions == 0)
    }

    @Test("A graph callback of an ObservableValue may observe it (the events layer joins without waiting)")
    func observeFromAGraphCallback() {
        let value = ObservableValue(1)
        let observer = Scripted("A", log: log)
        keep.keep(observer)
        let received = GraphLock<[Int]>([])
        let tokens = GraphLock<[SubscriptionToken]>([])
        observer.onSubscribe = { _ in
            let token = value.observeValuesNonisolated { number in received.withLock { $0.append(number) } }
            tokens.withLock { $0.append(token) }
        }
        value.addObserver(observer)
        value.value = 2
        #expect(received.withLock { $0 } == [1, 2])
        #expect(value.observerCount == 2)
        withExtendedLifetime(observer) {}
    }

    @Test("Two threads adding and removing the same observers: the book matches the graph")
    func concurrentChurnKeepsTheBook() {
        let book = MemberBook("O", log: EventLog())
        let quiet = EventLog()
        let observers = (0..<4).map { Scripted("T\($0)", log: quiet) }
        keep.keep(observers)
        // A slow didSubscribe widens the window in which the other thread removes the edge.
        for observer in observers { observer.onSubscribe = { _ in Thread.sleep(forTimeInterval: 0.000_02) } }
        race(threads: 2) { thread in
            var random = SeededGenerator(seed: UInt64(thread) &+ 7)
            for _ in 0..<4_000 {
                let observer = observers[Int.random(in: 0..<observers.count, using: &random)]
                switch Int.random(in: 0..<4, using: &random) {
                case 0: book.addObserver(observer)
                case 1: book.removeObserver(observer)
                case 2: observer.subscribe(to: book)
                default: observer.unsubscribe(from: book)
                }
            }
        }
        #expect(book.contradictions == 0)
        #expect(book.members == book.listed)
        withExtendedLifetime(observers) {}
    }
}
