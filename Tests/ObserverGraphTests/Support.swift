import Foundation
import ObserverGraph

/// A thread-safe, ordered record of everything the kit told our test objects.
final class EventLog: Sendable {
    private let entries = GraphLock<[String]>([])

    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func count(_ entry: String) -> Int { entries.withLock { $0.filter { $0 == entry }.count } }
    func clear() { entries.withLock { $0.removeAll() } }
}

/// A thread-safe counter per key.
final class Counters: Sendable {
    private let values = GraphLock<[String: Int]>([:])

    func bump(_ key: String, by amount: Int = 1) { values.withLock { $0[key, default: 0] += amount } }
    subscript(_ key: String) -> Int { values.withLock { $0[key, default: 0] } }
}

/// Something every test observer can report under, so histories name who did what.
protocol Named: AnyObject {
    var name: String { get }
}

/// A test object that runs scripts (closures) from its callbacks.
protocol ScriptRunner: AnyObject {
    /// Drops every script.
    func dropScripts()
}

/// Keeps a test's scripted objects alive until the test ends (observables hold observers
/// weakly, and optimized builds end a local's lifetime at its last use), then drops their
/// scripts: a script that names its own object, or a list the object is in, would otherwise keep
/// that object alive for good (a cycle of the test's own making, which the leak sanitizer
/// reports). Scripts must not capture the suite, which owns the keeper.
final class ScriptKeeper: @unchecked Sendable {
    private let runners = GraphLock<[any ScriptRunner]>([])

    func keep(_ more: any ScriptRunner...) { keep(more) }
    func keep(_ more: [any ScriptRunner]) { runners.withLock { $0 += more } }

    deinit {
        for runner in runners.withLock({ $0 }) { runner.dropScripts() }
    }
}

/// The message our observables broadcast in these tests.
protocol Pinged {
    func ping(_ tag: String)
}

final class Subject: GraphObservable, Named, @unchecked Sendable {
    let graphNode = GraphNode()
    let name: String
    let log: EventLog?
    let deinits: Counters?

    init(_ name: String, log: EventLog? = nil, deinits: Counters? = nil) {
        self.name = name
        self.log = log
        self.deinits = deinits
    }

    deinit { deinits?.bump(name) }

    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        log?.append("\(name).observer(\(nameOf(observer)), \(subscribed))")
    }
}

final class Watcher: GraphObserver, Pinged, Named, @unchecked Sendable {
    let name: String
    let log: EventLog?
    let deinits: Counters?

    init(_ name: String, log: EventLog? = nil, deinits: Counters? = nil) {
        self.name = name
        self.log = log
        self.deinits = deinits
    }

    deinit { deinits?.bump(name) }

    func didSubscribe(to observable: any GraphObservable) {
        log?.append("\(name).didSubscribe(\(nameOf(observable)))")
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log?.append("\(name).didUnsubscribe(\(nameOf(observable)))")
    }

    func ping(_ tag: String) { log?.append("\(name) got \(tag)") }
}

final class Tracker: GraphTrackingObserver, Pinged, Named, @unchecked Sendable {
    let graphNode = GraphNode()
    let name: String
    let log: EventLog?
    let deinits: Counters?

    init(_ name: String, log: EventLog? = nil, deinits: Counters? = nil) {
        self.name = name
        self.log = log
        self.deinits = deinits
    }

    deinit { deinits?.bump(name) }

    func didSubscribe(to observable: any GraphObservable) {
        log?.append("\(name).didSubscribe(\(nameOf(observable)))")
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log?.append("\(name).didUnsubscribe(\(nameOf(observable)))")
    }

    func ping(_ tag: String) { log?.append("\(name) got \(tag)") }
}

/// An object that is observable AND a tracking observer, like the app's queue manager.
final class Hub: GraphObservable, GraphTrackingObserver, Pinged, Named, @unchecked Sendable {
    let graphNode = GraphNode()
    let name: String
    let log: EventLog?
    let deinits: Counters?

    init(_ name: String, log: EventLog? = nil, deinits: Counters? = nil) {
        self.name = name
        self.log = log
        self.deinits = deinits
    }

    deinit { deinits?.bump(name) }

    func didSubscribe(to observable: any GraphObservable) {
        log?.append("\(name).didSubscribe(\(nameOf(observable)))")
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log?.append("\(name).didUnsubscribe(\(nameOf(observable)))")
    }

    func observer(_ observer: any GraphObserver, didSubscribe subscribed: Bool) {
        log?.append("\(name).observer(\(nameOf(observer)), \(subscribed))")
    }

    func ping(_ tag: String) { log?.append("\(name) got \(tag)") }
}

/// A struct observer: identity is stored, copies are the same observer.
struct ValueWatcher: GraphObserver, Pinged {
    let observerID = ObserverID()
    let name: String
    let log: EventLog

    func didSubscribe(to observable: any GraphObservable) {
        log.append("\(name).didSubscribe(\(nameOf(observable)))")
    }

    func didUnsubscribe(from observable: any GraphObservable) {
        log.append("\(name).didUnsubscribe(\(nameOf(observable)))")
    }

    func ping(_ tag: String) { log.append("\(name) got \(tag)") }
}

/// Counts its own deinit; lets a struct observer own a class instance.
final class Payload: @unchecked Sendable {
    let deinits: Counters
    let onDeinit: (@Sendable () -> Void)?

    init(deinits: Counters, onDeinit: (@Sendable () -> Void)? = nil) {
        self.deinits = deinits
        self.onDeinit = onDeinit
    }

    deinit {
        onDeinit?()
        deinits.bump("payload")
    }
}

struct PayloadObserver: GraphObserver {
    let observerID = ObserverID()
    let payload: Payload
}

/// A struct observer whose identity is given, so a payload-free copy can stand for it.
struct KeyedObserver: GraphObserver {
    let observerID: ObserverID
    let payload: Payload?
}

func nameOf(_ value: Any) -> String {
    if let named = value as? any Named { return named.name }
    if let watcher = value as? ValueWatcher { return watcher.name }
    return String(describing: type(of: value))
}

func names(_ values: [Any]) -> [String] { values.map(nameOf) }

/// All nodes of the given objects, for `GraphNode.consistencyViolations(among:)`.
func nodes(_ objects: [AnyObject]) -> [GraphNode] {
    objects.compactMap { object in
        (object as? any GraphObservable)?.graphNode ?? (object as? any GraphTrackingObserver)?.graphNode
    }
}

/// Runs `body(thread)` on `threads` threads at once and waits for all of them.
func race(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<threads {
        group.enter()
        let thread = Thread {
            start.wait()
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<threads { start.signal() }
    group.wait()
}

/// A small deterministic generator (SplitMix64), so random tests reproduce from their seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Holds the thread that calls `hold` with the one value it holds (a propagation pass, a
/// closure's call), after saying so, until `open()` (or 10 s).
final class HoldGate: Sendable {
    private let held: Int
    private let limit: Double
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    /// `limit`: how long a held thread waits for `open()` at most, in seconds.
    init(holding value: Int, limit: Double = 10) {
        held = value
        self.limit = limit
    }

    func hold(_ value: Int) {
        guard value == held else { return }
        entered.signal()
        _ = opened.wait(timeout: .now() + limit)
    }

    /// Whether a thread is held (waits up to 10 s for one to arrive).
    func waitUntilHeld() -> Bool { entered.wait(timeout: .now() + 10) == .success }
    func open() { opened.signal() }
}

extension ObservableValue<Int> {
    /// `map { $0 * factor }`, whose pass `gate` holds on the value it holds.
    func heldMap(_ gate: HoldGate, times factor: Int) -> DerivedValue<Int> {
        map { value in
            gate.hold(value)
            return value * factor
        }
    }
}

/// Runs `body` on a thread of its own. Not on Dispatch's global queue: on Linux it has about one
/// worker per core, and tests running in parallel that block (a main-actor test waiting for a
/// background call, say) can keep every worker busy for seconds, so a body queued there may not
/// start before a waiting test gives up.
func onNewThread(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread { body() }
    thread.stackSize = 1 << 20
    thread.start()
}

/// Runs `body` on a background thread; `returned(within:)` says whether it has returned.
final class BackgroundCall: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        onNewThread { [done] in
            body()
            done.signal()
        }
    }

    func returned(within seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}

/// Reads `value` (which may await, an actor's state, say) until it equals `expected` or `limit`
/// passes; returns the last value read, for the caller's exact expectation.
func awaitValue<Value: Equatable>(
    _ expected: Value, within limit: Duration = .seconds(120), _ value: () async -> Value
) async -> Value {
    let deadline = ContinuousClock.now + limit
    var last = await value()
    while last != expected && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
        last = await value()
    }
    return last
}

/// Polls `condition` on the caller's actor, sleeping 1 ms between tries, until it holds or
/// `limit` passes; returns whether it held. Each call has its own deadline, and the limit is
/// generous: a test runner that is busy elsewhere can keep an actor from its next turn for
/// seconds, and only a hang should fail a test.
func eventually(
    within limit: Duration = .seconds(120), isolation: isolated (any Actor)? = #isolation,
    _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now > deadline { return condition() }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}
