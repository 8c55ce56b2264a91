// Fuzz target: a random program of graph changes against the graph audit.
//
// Each input is a program over three observables (two plain, one that is also a tracking
// observer), five observers (a plain class, two tracking classes, a struct, and that hub) and an
// `ObservableValue` with closure observers. Steps: add, subscribe, remove, unsubscribe,
// removeAllObservers, unsubscribeFromAll, broadcast, drop or revive an observer (deallocation),
// arm a one-shot script that an observer runs from inside its next `didSubscribe(to:)` (a
// reentrant change), observe / cancel / send on the value (closure observers that cancel
// themselves from inside their handler, too).
//
// Checked after every step, exactly:
// - `GraphNode.consistencyViolations(among:)` is empty;
// - per edge, the calls that returned success, the observer's callbacks and the observable's
//   callbacks agree (adds = joins on both sides, removals = leaves on both sides), and the edge
//   is listed exactly when joins - leaves - edges lost to deallocation is 1;
// - each observable's member list, kept from its own callbacks in the order they arrive, equals
//   its `observers` in registration order (callbacks arrive in the order changes took effect);
// - a broadcast reaches each member once; every closure observer got each value once, and none
//   after it was cancelled.
// Any difference traps, and libFuzzer reports the input. Leaks are LeakSanitizer's to find.
import ObserverGraph

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGraph(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let world = World()
    var reader = Reader(Array(UnsafeBufferPointer(start: data, count: size)))
    while !reader.atEnd {
        world.step(&reader)
        world.check()
    }
    world.tearDown()
    return 0
}

// MARK: - The objects

/// What the harness can ask of every observer.
protocol Probe {
    var serial: Int { get }
    func hit()
}

/// What the harness can ask of every observable.
protocol Indexed: AnyObject {
    var index: Int { get }
}

/// The record every object reports to. The harness is single-threaded.
final class Ledger {
    struct Edge: Hashable {
        let observable: Int
        let serial: Int
    }
    var returnedAdds: [Edge: Int] = [:]
    var returnedRemovals: [Edge: Int] = [:]
    var observerJoins: [Edge: Int] = [:]
    var observerLeaves: [Edge: Int] = [:]
    var observableJoins: [Edge: Int] = [:]
    var observableLeaves: [Edge: Int] = [:]
    var lost: [Edge: Int] = [:]
    /// Each observable's members, from its own callbacks, in arrival order.
    var books: [[Int]] = [[], [], []]
    var hits: [Int: Int] = [:]
    /// One-shot scripts, by observer serial: run inside the observer's next `didSubscribe(to:)`.
    var scripts: [Int: (any GraphObservable) -> Void] = [:]

    func observableCallback(_ observable: Int, _ observer: any GraphObserver, _ subscribed: Bool) {
        guard let probe = observer as? any Probe else { fail("a callback with a foreign observer") }
        let edge = Edge(observable: observable, serial: probe.serial)
        if subscribed {
            observableJoins[edge, default: 0] += 1
            guard !books[observable].contains(probe.serial) else {
                fail("observable \(observable) told twice that \(probe.serial) joined")
            }
            books[observable].append(probe.serial)
        } else {
            observableLeaves[edge, default: 0] += 1
            guard let position = books[observable].firstIndex(of: probe.serial) else {
                fail("observable \(observable) told that \(probe.serial) left, which had not joined")
            }
            books[observable].remove(at: position)
        }
    }

    func observerCallback(_ serial: Int, _ observable: any GraphObservable, _ subscribed: Bool) {
        guard let indexed = observable as? any Indexed else { fail("a callback with a foreign observable") }
        let edge = Edge(observable: indexed.index, serial: serial)
        if subscribed {
            observerJoins[edge, default: 0] += 1
            if let script = scripts.removeValue(forKey: serial) { script(observable) }
        } else {
            observerLeaves[edge, default: 0] += 1
        }
    }
}

func fail(_ message: String) -> Never {
    fatalError("graph fuzz: " + message)
}

final class Book: GraphObservable, Indexed {
    let graphNode = GraphNode()
    let index: Int
    unowned let ledger: Ledger
    init(index: Int, ledger: Ledger) {
        self.index = index
        self.ledger = ledger
    }
    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        ledger.observableCallback(index, observer, subscribed)
    }
}

/// Observable (index 2) and tracking observer at once.
final class Hub: GraphObservable, GraphTrackingObserver, Indexed, Probe {
    let graphNode = GraphNode()
    let index = 2
    let serial: Int
    unowned let ledger: Ledger
    init(serial: Int, ledger: Ledger) {
        self.serial = serial
        self.ledger = ledger
    }
    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        ledger.observableCallback(index, observer, subscribed)
    }
    func didSubscribe(to observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, true)
    }
    func didUnsubscribe(from observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, false)
    }
    func hit() { ledger.hits[serial, default: 0] += 1 }
}

final class PlainProbe: GraphObserver, Probe {
    let serial: Int
    unowned let ledger: Ledger
    init(serial: Int, ledger: Ledger) {
        self.serial = serial
        self.ledger = ledger
    }
    func didSubscribe(to observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, true)
    }
    func didUnsubscribe(from observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, false)
    }
    func hit() { ledger.hits[serial, default: 0] += 1 }
}

final class TrackProbe: GraphTrackingObserver, Probe {
    let graphNode = GraphNode()
    let serial: Int
    unowned let ledger: Ledger
    init(serial: Int, ledger: Ledger) {
        self.serial = serial
        self.ledger = ledger
    }
    func didSubscribe(to observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, true)
    }
    func didUnsubscribe(from observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, false)
    }
    func hit() { ledger.hits[serial, default: 0] += 1 }
}

struct ValueProbe: GraphObserver, Probe {
    let observerID = ObserverID()
    let serial: Int
    unowned let ledger: Ledger
    func didSubscribe(to observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, true)
    }
    func didUnsubscribe(from observable: any GraphObservable) {
        ledger.observerCallback(serial, observable, false)
    }
    func hit() { ledger.hits[serial, default: 0] += 1 }
}

/// A closure observer of the value: how many values it got, and whether it was cancelled.
final class Tap: @unchecked Sendable {
    var received = 0
    var expected = 0
    var cancelled = false
    var token: SubscriptionToken?
}

// MARK: - The program

final class World {
    let ledger = Ledger()
    let observables: [any GraphObservable & Indexed]
    let hub: Hub
    /// Observer slots 0...3 (slot 4 is the hub). Class slots can be dropped (nil) and revived.
    var observers: [(any GraphObserver & Probe)?] = []
    var nextSerial = 10
    let value = ObservableValue(0)
    var taps: [Tap] = []

    init() {
        hub = Hub(serial: 4, ledger: ledger)
        observables = [Book(index: 0, ledger: ledger), Book(index: 1, ledger: ledger), hub]
        observers = (0..<4).map { make(slot: $0) }
    }

    func make(slot: Int) -> any GraphObserver & Probe {
        nextSerial += 1
        switch slot {
        case 0: return PlainProbe(serial: nextSerial, ledger: ledger)
        case 1, 2: return TrackProbe(serial: nextSerial, ledger: ledger)
        default: return ValueProbe(serial: nextSerial, ledger: ledger)
        }
    }

    func observer(_ choice: UInt8) -> (any GraphObserver & Probe)? {
        let slot = Int(choice) % 5
        return slot == 4 ? hub : observers[slot]
    }

    func edge(_ observable: any Indexed, _ observer: any Probe) -> Ledger.Edge {
        Ledger.Edge(observable: observable.index, serial: observer.serial)
    }

    func noteAdd(_ observable: any Indexed, _ observer: any Probe, _ done: Bool) {
        if done { ledger.returnedAdds[edge(observable, observer), default: 0] += 1 }
    }

    func noteRemoval(_ observable: any Indexed, _ observer: any Probe, _ done: Bool) {
        if done { ledger.returnedRemovals[edge(observable, observer), default: 0] += 1 }
    }

    /// One change, made by the program or by a script from inside a callback.
    func change(
        _ kind: UInt8, _ observable: any GraphObservable & Indexed, _ probe: any GraphObserver & Probe
    ) {
        switch kind % 6 {
        case 0: noteAdd(observable, probe, observable.addObserver(probe) != nil)
        case 1: noteAdd(observable, probe, probe.subscribe(to: observable))
        case 2: noteRemoval(observable, probe, observable.removeObserver(probe) != nil)
        case 3: noteRemoval(observable, probe, probe.unsubscribe(from: observable))
        case 4:
            for removed in observable.removeAllObservers() {
                guard let removedProbe = removed as? any Probe else {
                    fail("removeAllObservers: a foreign observer")
                }
                noteRemoval(observable, removedProbe, true)
            }
        default:
            guard let tracker = probe as? any GraphTrackingObserver else { return }
            for left in tracker.unsubscribeFromAll() {
                guard let indexed = left as? any Indexed else {
                    fail("unsubscribeFromAll: a foreign observable")
                }
                noteRemoval(indexed, probe, true)
            }
        }
    }

    func step(_ reader: inout Reader) {
        let operation = reader.next()
        let observable = observables[Int(reader.next()) % 3]
        switch operation % 10 {
        case 0, 1, 2, 3:
            guard let probe = observer(reader.next()) else { return }
            change(operation % 4 == 0 ? reader.next() : operation, observable, probe)
        case 4:
            broadcast(observable)
        case 5:
            // Arm a script: from inside its next didSubscribe, the observer changes the graph.
            // Observers are named by slot, not captured, so that dropping one deallocates it.
            let ownerChoice = reader.next()
            guard let serial = observer(ownerChoice)?.serial else { return }
            let kind = reader.next()
            let targetChoice = reader.next()
            let other = observables[Int(reader.next()) % 3]
            ledger.scripts[serial] = { [unowned self] subscribedTo in
                guard let indexed = subscribedTo as? any GraphObservable & Indexed,
                    let owner = self.observer(ownerChoice), owner.serial == serial
                else { return }
                switch kind % 3 {
                case 0: self.change(kind / 3, indexed, owner)  // on itself, at this observable
                case 1:  // on another observer, at this observable
                    if let target = self.observer(targetChoice) { self.change(kind / 3, indexed, target) }
                default: self.change(kind / 3, other, owner)  // on itself, at another observable
                }
            }
        case 6:
            dropOrRevive(slot: Int(reader.next()) % 3)
        case 7:
            observeValue(oneShot: reader.next() & 1 == 1)
        case 8:
            let index = Int(reader.next())
            guard !taps.isEmpty else { return }
            let tap = taps[index % taps.count]
            tap.token?.cancel()
            tap.cancelled = true
        default:
            sendValue(Int(reader.next()))
        }
    }

    func broadcast(_ observable: any GraphObservable & Indexed) {
        ledger.hits = [:]
        let reached = observable.broadcast(as: (any Probe).self) { $0.hit() }
        let members = ledger.books[observable.index]
        guard reached == members.count,
            ledger.hits == Dictionary(uniqueKeysWithValues: members.map { ($0, 1) })
        else {
            fail("broadcast reached \(reached) with hits \(ledger.hits); members \(members)")
        }
    }

    /// Drops a class observer (slots 0...2): its edges go without callbacks. Or revives it.
    func dropOrRevive(slot: Int) {
        guard let probe = observers[slot] else {
            observers[slot] = make(slot: slot)
            return
        }
        for observable in observables {
            let edge = edge(observable, probe)
            if observable.hasObserver(probe) { ledger.lost[edge, default: 0] += 1 }
            ledger.books[observable.index].removeAll { $0 == probe.serial }
        }
        ledger.scripts[probe.serial] = nil
        observers[slot] = nil  // the last reference: deallocated here
    }

    func observeValue(oneShot: Bool) {
        let tap = Tap()
        taps.append(tap)
        tap.expected = 1  // the current value, first
        tap.token = value.observeNonisolated { [unowned tap] _ in
            tap.received += 1
            // A one-shot cancels on its first value after the current one (by then it has its token).
            if oneShot && tap.received == 2 {
                tap.cancelled = true
                tap.token?.cancel()  // from inside its own handler
            }
        }
    }

    func sendValue(_ number: Int) {
        for tap in taps where !tap.cancelled { tap.expected += 1 }
        value.value = number
    }

    func check() {
        let nodes =
            observables.map(\.graphNode)
            + observers.compactMap { ($0 as? any GraphTrackingObserver)?.graphNode }
        let violations = GraphNode.consistencyViolations(among: nodes)
        guard violations.isEmpty else { fail("audit: \(violations)") }
        for observable in observables {
            let listed = observable.observers.map { ($0 as? any Probe)?.serial ?? -1 }
            guard listed == ledger.books[observable.index] else {
                fail(
                    "observable \(observable.index) lists \(listed), its callbacks said \(ledger.books[observable.index])"
                )
            }
            for probe in observers.compactMap({ $0 }) + [hub] {
                checkEdge(observable, probe)
            }
        }
        for case let tracker as any GraphTrackingObserver & Probe in observers.compactMap({ $0 }) + [hub] {
            let subscribed = Set(tracker.subscriptions.map { ($0 as? any Indexed)?.index ?? -1 })
            let expected = Set(observables.filter { $0.hasObserver(tracker) }.map(\.index))
            guard subscribed == expected else {
                fail("tracker \(tracker.serial) lists \(subscribed), not \(expected)")
            }
        }
        for tap in taps where tap.received != tap.expected {
            fail(
                "a closure observer got \(tap.received) values, expected \(tap.expected) (cancelled: \(tap.cancelled))"
            )
        }
        let live = taps.filter { !$0.cancelled }.count
        guard value.observerCount == live else {
            fail("the value has \(value.observerCount) observers, \(live) live taps")
        }
    }

    func checkEdge(_ observable: any GraphObservable & Indexed, _ probe: any GraphObserver & Probe) {
        let edge = edge(observable, probe)
        let adds = ledger.returnedAdds[edge, default: 0]
        let removals = ledger.returnedRemovals[edge, default: 0]
        guard adds == ledger.observerJoins[edge, default: 0],
            adds == ledger.observableJoins[edge, default: 0],
            removals == ledger.observerLeaves[edge, default: 0],
            removals == ledger.observableLeaves[edge, default: 0]
        else {
            fail(
                "edge \(edge): \(adds) adds, \(removals) removals returned; observer saw \(ledger.observerJoins[edge, default: 0])/\(ledger.observerLeaves[edge, default: 0]), observable saw \(ledger.observableJoins[edge, default: 0])/\(ledger.observableLeaves[edge, default: 0])"
            )
        }
        let present = adds - removals - ledger.lost[edge, default: 0]
        guard present == (observable.hasObserver(probe) ? 1 : 0) else {
            fail(
                "edge \(edge): joins - leaves - lost is \(present), hasObserver says \(observable.hasObserver(probe))"
            )
        }
    }

    func tearDown() {
        for tap in taps { tap.token?.cancel() }
        taps = []
        ledger.scripts = [:]  // scripts capture observers
    }
}

/// Reads the fuzzer's bytes as choices; past the end every choice is 0.
struct Reader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }
}
