// A small plain executable that runs ONE kit workload, for instruction-level profiling:
//
//     valgrind --tool=callgrind --toggle-collect='*measuredSection*F' \
//         ObserverGraphProfile subscribe 100000
//
// Only `measuredSection` (and what it calls) is counted, not the set-up. See README.md,
// "Profiling", for the whole recipe (valgrind needs a copy without DWARF 5 debug info).

import Baselines
import CMallocStats
import ObserverGraph
import OpenCombine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

final class Subject: GraphObservable {
    let graphNode = GraphNode()
}

final class Obs: GraphObserver {
    private(set) var total = 0
    func receive(_ value: Int) { total &+= value }
}

final class TrackingObs: GraphTrackingObserver {
    let graphNode = GraphNode()
}

/// Lets the profile's closures capture a non-Sendable observer (delivery is synchronous here).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}

struct Weak {
    weak var object: Obs?
}

/// The hand-written weak registry of the benchmarks (Fixtures.swift), for instruction counts.
final class HandRegistry {
    private let storage = GraphLock<[ObjectIdentifier: Weak]>([:])

    func add(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { entries in
            if entries[key]?.object != nil { return false }
            entries[key] = Weak(object: observer)
            return true
        }
    }

    func remove(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { $0.removeValue(forKey: key) != nil }
    }

    func contains(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { $0[key]?.object != nil }
    }

    func removeChecked(_ observer: Obs) -> Bool {
        let key = ObjectIdentifier(observer)
        return storage.withLock { entries in
            guard let index = entries.index(forKey: key) else { return false }
            let live = entries.values[index].object === observer
            entries.remove(at: index)
            return live
        }
    }
}

/// The benchmark's `HandTrackingObs` (Fixtures.swift): an observer that lists its registries
/// behind a lock of its own. This and the three types below are a copy of the benchmark's, as
/// `HandRegistry` is: moved to the shared `Baselines` module (inlinable), the same code compiled
/// to 47 more instructions per `add`, so a shared version would not be what the benchmark runs.
final class HandTrackingObs: @unchecked Sendable {
    let subscriptions = GraphLock<[WeakTrackingRegistry]>([])
}

struct WeakTrackingRegistry {
    let key: ObjectIdentifier
    weak var object: HandTrackingRegistry?
}

struct WeakTracker {
    weak var object: HandTrackingObs?
}

/// The benchmark's `HandTrackingRegistry`: `HandRegistry` recording each edge on both sides.
final class HandTrackingRegistry: @unchecked Sendable {
    private let storage = GraphLock<[ObjectIdentifier: WeakTracker]>([:])

    func add(_ observer: HandTrackingObs) -> Bool {
        let key = ObjectIdentifier(observer)
        let me = ObjectIdentifier(self)
        return storage.withLock { entries in
            if entries[key]?.object != nil { return false }
            entries[key] = WeakTracker(object: observer)
            observer.subscriptions.withLock { $0.append(WeakTrackingRegistry(key: me, object: self)) }
            return true
        }
    }

    func remove(_ observer: HandTrackingObs) -> Bool {
        let key = ObjectIdentifier(observer)
        let me = ObjectIdentifier(self)
        return storage.withLock { entries in
            guard entries.removeValue(forKey: key) != nil else { return false }
            observer.subscriptions.withLock { list in
                if let index = list.firstIndex(where: { $0.key == me }) { list.remove(at: index) }
            }
            return true
        }
    }
}

/// A seeded permutation of 0..<count (SplitMix64 and Fisher-Yates).
func permutation(_ count: Int, seed: UInt64) -> [Int] {
    var state = seed
    var positions = Array(0..<count)
    for i in stride(from: count - 1, to: 0, by: -1) {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        positions.swapAt(i, Int(z % UInt64(i + 1)))
    }
    return positions
}

@_optimize(none) @inline(never)
func blackHole<T>(_ value: T) {}

@_optimize(none) @inline(never)
func opaque<T>(_ value: T) -> T { value }

let workloads = [
    "broadcast": "kit broadcast to n plain observers, `rounds` times",
    "weakloop": "hand-written loop over n weak references, `rounds` times",
    "closureloop": "hand-written loop over n closures, `rounds` times",
    "subscribe": "subscribe n plain observers to a fresh observable",
    "unsubscribe": "unsubscribe n plain observers, oldest first",
    "subscribe-tracking": "subscribe n tracking observers",
    "rev-subscribe-tracking": "subscribe n tracking observers, newest first",
    "unsubscribe-tracking": "unsubscribe n tracking observers, oldest first",
    "subscribe-tracking-second":
        "subscribe n tracking observers that are subscribed to another observable already",
    "unsubscribe-tracking-second":
        "unsubscribe n tracking observers that stay subscribed to another observable",
    "lookup": "isSubscribed for n subscribed plain observers",
    "lookup-absent": "isSubscribed for n plain observers that are not subscribed (n others are)",
    "unsubscribe-random": "unsubscribe n plain observers in a seeded random order",
    "subscribe-random": "subscribe n plain observers in a seeded random order",
    "hand-subscribe-random": "hand-written registry: add n observers in a seeded random order",
    "subscribe-actor": "subscribe n plain observers as a main-actor caller does (the actor is recorded)",
    "unsubscribe-actor": "unsubscribe n plain observers that a main-actor caller subscribed, oldest first",
    "subscribe-fresh": "subscribe n plain observers never referenced weakly (side tables allocated)",
    "hand-subscribe": "hand-written GraphLock<[ObjectIdentifier: Weak]>: add n observers",
    "hand-unsubscribe": "hand-written registry: remove n observers, oldest first",
    "cycle": "`rounds` cycles as in the churn benchmark: subscribe n plain observers, then unsubscribe them",
    "hand-cycle": "the cycle workload on the hand-written registry",
    "hand-cycle-checked": "hand-cycle, its removal checking that the entry is this very observer, alive",
    "hand-lookup": "hand-written registry: lookup n present observers",
    "hand-subscribe-tracking": "hand-written tracking registry (both sides recorded): add n observers",
    "hand-unsubscribe-tracking": "hand-written tracking registry: remove n observers, oldest first",
    "steady": "steady churn: n subscribed, then `rounds` x n random unsubscribe+subscribe pairs",
    "valueset": "set an ObservableValue<Int> observed by one closure, n times",
    "valueset-many": "set an ObservableValue<Int> observed by n closures, `rounds` times",
    "valuelife": "make n ObservableValue<Bool>, each observed by one closure, then release them all",
    "hand-gated":
        "hand-written locked value with n gated closures (the benchmark's gated limit), `rounds` sets",
    "arrayappend": "append n elements to an ObservableArray<Int> observed by ten closures",
    "hand-arrayappend": "hand baseline: append n elements to an [Int], hand one ArrayChange to ten closures",
    "chain": "set an ObservableValue<Int> n times through map, filter, removeDuplicates to one observer",
    "diamond": "set an ObservableValue<Int> n times through map and map into combineLatest",
    "map": "set an ObservableValue<Int> n times through one map to one observer",
    "oc-chain": "the chain workload in OpenCombine: CurrentValueSubject, map, filter, removeDuplicates, sink",
    "actorset": "set an ObservableValue<Int> n times on the main actor, observed by one main-actor closure",
    "arraymutations":
        "insert, set, remove and move in an ObservableArray<Int> of 1,000 observed by one closure, n rounds",
    "sectionedappend":
        "append n items across the 10 sections of an ObservableSectionedArray observed by one closure",
    "derivedappend":
        "append n elements to an ObservableArray<Int> of 1,000, observed through a map by one closure",
    "derivedfilter":
        "append n elements to an ObservableArray<Int> of `rounds` elements, observed through a filter by one closure",
    "derivedset":
        "set n elements of an ObservableArray<Int> of 1,000, observed through a filter and a map by one closure each",
    "actorappend":
        "append n elements to an ObservableArray<Int> on the main actor, observed by one main-actor closure",
    "coalescedappend":
        "append n elements to an ObservableArray<Int> on the main actor, observed coalesced by one main-actor closure",
    "mainappend": "append n elements to an ObservableArray<Int> on the main actor, with no observer",
    "coalescedsections":
        "append n items across the 4 sections of an ObservableSectionedArray on the main actor, observed coalesced by one main-actor closure",
    "mainsections":
        "append n items across the 4 sections of an ObservableSectionedArray on the main actor, with no observer",
    "coalescedvalue":
        "set an ObservableValue<Int> n times on the main actor, observed coalesced by one main-actor closure",
    "mainvalue": "set an ObservableValue<Int> n times on the main actor, with no observer",
    "actorsend":
        "send n values to an EventChannel<Int> on the main actor, observed by one main-actor closure",
    "send": "send n values to an EventChannel<Int> on the main actor, observed by one nonisolated closure",
    "diff": "ArrayChangeset.diff of 0..<n against it with 0.5% deleted and 0.5% inserted, `rounds` times",
]

let arguments = CommandLine.arguments
guard arguments.count >= 2, let description = workloads[arguments[1]] else {
    print("usage: ObserverGraphProfile <workload> [n] [rounds]")
    print("  prints the wall-clock time of the measured section too (one run: noisy, compare A/B runs)")
    print("  PROFILE_LATE_SIDE_TABLES=1: trackers get their side tables when first subscribed, as in the")
    print("  churn benchmark, instead of in a pass of their own before")
    for (name, text) in workloads.sorted(by: { $0.key < $1.key }) { print("  \(name): \(text)") }
    exit(2)
}
let workload = arguments[1]
let n = arguments.count > 2 ? Int(arguments[2]) ?? 1_000 : 1_000
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 100 : 100
let value = opaque(1)

let observers = (0..<n).map { _ in Obs() }
let others = workload == "lookup-absent" ? (0..<n).map { _ in Obs() } : []
let fresh = workload == "subscribe-fresh" ? (0..<n).map { _ in Obs() } : []
let order = permutation(n, seed: 0x5EED_0002)
let hand = HandRegistry()
let trackers =
    workload.contains("tracking") && !workload.hasPrefix("hand-") ? (0..<n).map { _ in TrackingObs() } : []
/// The other observable of the `-second` workloads' trackers.
let holder = Subject()
let subject = Subject()
let handTracking = HandTrackingRegistry()
let handTrackers =
    workload.hasPrefix("hand-") && workload.hasSuffix("tracking")
    ? (0..<n).map { _ in HandTrackingObs() } : []
/// Trackers get their side tables up front too, as the churn benchmark's reused ones have.
let trackerSideTables =
    getenv("PROFILE_LATE_SIDE_TABLES") != nil ? [] : trackers.map { tracker in { [weak tracker] in tracker } }
let weaks = observers.map { Weak(object: $0) }  // every observer gets its side table up front
let closures: [(Int) -> Void] = observers.map { observer in { observer.receive($0) } }
/// Malloc bytes in use before the registry is filled (the steady workload measures from here).
let bytesBeforeSetup = og_malloc_bytes_in_use()
// Set up with no isolation (as the benchmark's nonisolated scenarios subscribe), not from this
// main-actor top-level code: the `-actor` workloads measure an actor's observers.
switch workload {
case "broadcast", "lookup", "unsubscribe", "unsubscribe-random", "steady":
    for observer in observers { subject.addObserver(observer, isolation: nil) }
case "lookup-absent":
    for observer in others { subject.addObserver(observer, isolation: nil) }
case "unsubscribe-actor":
    for observer in observers { subject.addObserver(observer, isolation: MainActor.shared) }
case "hand-unsubscribe", "hand-lookup":
    for observer in observers { _ = hand.add(observer) }
case "unsubscribe-tracking":
    for tracker in trackers { subject.addObserver(tracker, isolation: nil) }
case "hand-subscribe-tracking", "hand-unsubscribe-tracking":
    // As in the churn benchmark: each list already has its storage, each observer its side table.
    for tracker in handTrackers { _ = handTracking.add(tracker) }
    if workload == "hand-subscribe-tracking" {
        for tracker in handTrackers { _ = handTracking.remove(tracker) }
    }
case "subscribe-tracking-second", "unsubscribe-tracking-second":
    // Each tracker's list holds two entries once (it keeps that storage), then one or two.
    for tracker in trackers { holder.addObserver(tracker, isolation: nil) }
    for tracker in trackers { subject.addObserver(tracker, isolation: nil) }
    if workload == "subscribe-tracking-second" {
        for tracker in trackers { subject.removeObserver(tracker) }
    }
case "subscribe-tracking", "rev-subscribe-tracking":
    // As in the churn benchmark, whose trackers are reused: each one's list of subscriptions
    // already has its storage.
    for tracker in trackers { subject.addObserver(tracker, isolation: nil) }
    for tracker in trackers { subject.removeObserver(tracker) }
default:
    break
}

/// The diff workload's arrays (the benchmark's `diff N=… 1% changed`): 0..<n, then 0.5% of it
/// deleted and as many new elements inserted, at seeded random places.
let diffArrays: (old: [Int], new: [Int]) = {
    guard workload == "diff" else { return ([], []) }
    let old = Array(0..<n)
    var new = old
    let changes = max(1, n / 200)
    let places = permutation(n, seed: 0x5EED_0099)
    for step in 0..<changes { new.remove(at: places[step] % new.count) }
    for step in 0..<changes { new.insert(2 * n + step, at: places[changes + step] % (new.count + 1)) }
    return (old, new)
}()

/// The operator workloads' source and observation, built (and warmed by one set) before the
/// measured section; they count what the observer received.
let operatorSource = ObservableValue(-1)
let operatorSum = GraphLock(0)
let operatorToken: SubscriptionToken? =
    switch workload {
    case "chain":
        operatorSource.map { $0 &* 3 }.filter { $0 % 2 == 0 }.removeDuplicates()
            .observeValuesNonisolated { v in operatorSum.withLock { $0 &+= v } }
    case "map":
        operatorSource.map { $0 &* 3 }.observeValuesNonisolated { v in operatorSum.withLock { $0 &+= v } }
    case "diamond":
        operatorSource.map { $0 &* 2 }.combineLatest(operatorSource.map { $0 &+ 1 })
            .observeValuesNonisolated { v in operatorSum.withLock { $0 &+= v.0 &+ v.1 } }
    default: nil
    }
operatorSource.value = -1
/// The chain workload's peer: the same chain in OpenCombine, built and warmed the same way.
nonisolated(unsafe) let combineSubject = CurrentValueSubject<Int, Never>(-1)
let combineCancellable: AnyCancellable? =
    workload == "oc-chain"
    ? combineSubject.map { $0 &* 3 }.filter { $0 % 2 == 0 }.removeDuplicates()
        .sink { v in operatorSum.withLock { $0 &+= v } }
    : nil
combineSubject.send(-1)

/// Everything the measured section works on, built before it starts.
struct Fixture {
    let workload: String
    let rounds: Int
    let value: Int
    let subject: Subject
    let observers: [Obs]
    let trackers: [TrackingObs]
    let weaks: [Weak]
    let closures: [(Int) -> Void]
    let fresh: [Obs]
    let order: [Int]
    let hand: HandRegistry
    let handTracking: HandTrackingRegistry
    let handTrackers: [HandTrackingObs]
}

/// The only part callgrind counts (with --toggle-collect='*measuredSection*F').
@inline(never)
func measuredSection(_ f: Fixture) -> Int {
    var result = 0
    switch f.workload {
    case "broadcast":
        let value = f.value  // the body captures one Int, not the whole fixture
        for _ in 0..<f.rounds { result &+= f.subject.broadcast(as: Obs.self) { $0.receive(value) } }
    case "weakloop":
        for _ in 0..<f.rounds {
            for i in f.weaks.indices { f.weaks[i].object?.receive(f.value) }
        }
    case "closureloop":
        for _ in 0..<f.rounds {
            for closure in f.closures { closure(f.value) }
        }
    case "subscribe":
        for observer in f.observers where f.subject.addObserver(observer) != nil { result &+= 1 }
    case "unsubscribe", "unsubscribe-actor":
        for observer in f.observers where f.subject.removeObserver(observer) != nil { result &+= 1 }
    case "subscribe-actor":
        let actor = MainActor.shared
        for observer in f.observers where f.subject.addObserver(observer, isolation: actor) != nil {
            result &+= 1
        }
    case "subscribe-tracking", "subscribe-tracking-second":
        for tracker in f.trackers where f.subject.addObserver(tracker) != nil { result &+= 1 }
    case "rev-subscribe-tracking":
        for tracker in f.trackers.reversed() where f.subject.addObserver(tracker) != nil { result &+= 1 }
    case "unsubscribe-tracking", "unsubscribe-tracking-second":
        for tracker in f.trackers where f.subject.removeObserver(tracker) != nil { result &+= 1 }
    case "valueset":
        let value = ObservableValue(0)
        let sum = GraphLock(0)
        let token = value.observeValuesNonisolated { v in sum.withLock { $0 &+= v } }
        for i in 0..<f.observers.count { value.value = i }
        result = sum.withLock { $0 }
        withExtendedLifetime(token) {}
    case "valuelife":
        let seen = GraphLock(0)
        var values: [ObservableValue<Bool>] = []
        var tokens: [SubscriptionToken] = []
        values.reserveCapacity(f.observers.count)
        tokens.reserveCapacity(f.observers.count)
        for i in 0..<f.observers.count {
            let value = ObservableValue(i & 1 == 0, skipsEqualValues: true)
            tokens.append(value.observeValuesNonisolated { v in seen.withLock { $0 &+= v ? 1 : 0 } })
            values.append(value)
        }
        result = seen.withLock { $0 }
        tokens = []
        values = []
    case "valueset-many":
        let value = ObservableValue(0)
        let tokens = f.observers.map { observer in
            let target = UncheckedSendable(value: observer)
            return value.observeValuesNonisolated { target.value.receive($0) }
        }
        for _ in 0..<f.rounds { value.value = f.value }
        result = f.observers.reduce(0) { $0 &+ $1.total }
        withExtendedLifetime(tokens) {}
    case "hand-gated":
        let gated = HandGatedValue()
        for observer in f.observers {
            let target = UncheckedSendable(value: observer)
            gated.observe { target.value.receive($0) }
        }
        for _ in 0..<f.rounds { gated.set(f.value) }
        result = f.observers.reduce(0) { $0 &+ $1.total }
    case "arrayappend":
        let array = ObservableArray<Int>()
        let sum = GraphLock(0)
        let tokens = (0..<10).map { _ in
            array.observeValuesNonisolated { change in
                sum.withLock { $0 &+= change.changeset.inserts.count }
            }
        }
        for i in 0..<f.observers.count { array.append(i) }
        result = sum.withLock { $0 }
        withExtendedLifetime(tokens) {}
    case "arraymutations":
        // Every mutation but append, each observed by one closure: insert in the middle, set,
        // remove from the middle, move; n rounds on an array of 1,000.
        let array = ObservableArray(Array(0..<1_000))
        let sum = GraphLock(0)
        let token = array.observeValuesNonisolated { change in sum.withLock { $0 &+= change.array.count } }
        for i in 0..<f.observers.count {
            try? array.insert(i, at: 500)
            try? array.set(i, at: 250)
            _ = try? array.remove(at: 600)
            try? array.move(from: 100, to: 900)
        }
        result = sum.withLock { $0 }
        withExtendedLifetime(token) {}
    case "sectionedappend":
        let sections = ObservableSectionedArray((0..<10).map { ArraySection(metadata: $0, items: [Int]()) })
        let sum = GraphLock(0)
        let token = sections.observeValuesNonisolated { change in
            sum.withLock { $0 &+= change.sections.count }
        }
        for i in 0..<f.observers.count { try? sections.appendItem(i, toSection: i % 10) }
        result = sum.withLock { $0 }
        withExtendedLifetime(token) {}
    case "derivedappend":
        result = appendThroughDerived(f.observers.count, initial: 1_000) { $0.map { $0 &* 2 } }
    case "derivedfilter":
        result = appendThroughDerived(f.observers.count, initial: f.rounds) { $0.filter { $0 % 2 == 0 } }
    case "derivedset":
        result = setThroughDerived(f.observers.count)
    case "hand-arrayappend":
        let sum = GraphLock(0)
        let handlers: [(ArrayChange<Int>) -> Void] = (0..<10).map { _ in
            { change in sum.withLock { $0 &+= change.changeset.inserts.count } }
        }
        var array: [Int] = []
        for i in 0..<f.observers.count {
            array.append(i)
            let change = ArrayChange(array: array, changeset: ArrayChangeset(inserts: [array.count - 1]))
            for handler in handlers { handler(change) }
        }
        result = sum.withLock { $0 }
        blackHole(array)
    case "diff":
        for _ in 0..<f.rounds {
            let changeset = ArrayChangeset.diff(from: opaque(diffArrays.old), to: opaque(diffArrays.new))
            result &+= changeset.deletes.count &+ changeset.inserts.count
        }
    case "chain", "diamond", "map":
        for i in 0..<f.observers.count { operatorSource.value = i >> 1 }
        result = operatorSum.withLock { $0 }
    case "oc-chain":
        for i in 0..<f.observers.count { combineSubject.send(i >> 1) }
        result = operatorSum.withLock { $0 }
    case "unsubscribe-random":
        for p in f.order where f.subject.removeObserver(f.observers[p]) != nil { result &+= 1 }
    case "subscribe-fresh":
        for observer in f.fresh where f.subject.addObserver(observer) != nil { result &+= 1 }
    case "hand-subscribe":
        for observer in f.observers where f.hand.add(observer) { result &+= 1 }
    case "subscribe-random":
        for p in f.order where f.subject.addObserver(f.observers[p]) != nil { result &+= 1 }
    case "hand-subscribe-random":
        for p in f.order where f.hand.add(f.observers[p]) { result &+= 1 }
    case "hand-unsubscribe":
        for observer in f.observers where f.hand.remove(observer) { result &+= 1 }
    case "cycle":
        for _ in 0..<f.rounds {
            let subject = Subject()
            for observer in f.observers where subject.addObserver(observer) != nil { result &+= 1 }
            for observer in f.observers where subject.removeObserver(observer) != nil { result &+= 1 }
        }
    case "hand-cycle-checked":
        for _ in 0..<f.rounds {
            let hand = HandRegistry()
            for observer in f.observers where hand.add(observer) { result &+= 1 }
            for observer in f.observers where hand.removeChecked(observer) { result &+= 1 }
        }
    case "hand-cycle":
        for _ in 0..<f.rounds {
            let hand = HandRegistry()
            for observer in f.observers where hand.add(observer) { result &+= 1 }
            for observer in f.observers where hand.remove(observer) { result &+= 1 }
        }
    case "hand-lookup":
        for observer in f.observers where f.hand.contains(observer) { result &+= 1 }
    case "hand-subscribe-tracking":
        for tracker in f.handTrackers where f.handTracking.add(tracker) { result &+= 1 }
    case "hand-unsubscribe-tracking":
        for tracker in f.handTrackers where f.handTracking.remove(tracker) { result &+= 1 }
    case "steady":
        // Each step removes one observer at random and adds it back at the end: the registry
        // keeps n live entries while holes come and go (compaction and index upkeep). The
        // registry's bytes (malloc bytes in use above the start) are sampled 16 times a round.
        let base = bytesBeforeSetup
        var peak = 0
        var sum = 0
        var samples = 0
        let every = max(1, f.order.count / 16)
        for _ in 0..<f.rounds {
            for (step, p) in f.order.enumerated() {
                let observer = f.observers[p]
                if f.subject.removeObserver(observer) != nil { result &+= 1 }
                if f.subject.addObserver(observer) != nil { result &+= 1 }
                if step % every == 0 {
                    let bytes = Int(og_malloc_bytes_in_use()) - Int(base)
                    peak = max(peak, bytes)
                    sum += bytes
                    samples += 1
                }
            }
        }
        let live = f.observers.count
        print(
            "steady: registry bytes per live entry: mean \(sum / max(1, samples) / live), "
                + "peak \(peak / live)")
    case "lookup", "lookup-absent":
        for observer in f.observers where f.subject.hasObserver(observer) { result &+= 1 }
    default:
        break
    }
    return result
}

/// Appends `count` elements to an array of `initial` elements, observed through `derive` by one
/// closure; returns the inserts the closure saw.
func appendThroughDerived(
    _ count: Int, initial: Int, _ derive: (ObservableArray<Int>) -> ReadOnlyObservableArray<Int>
) -> Int {
    let array = ObservableArray(Array(0..<initial))
    let derived = derive(array)
    let sum = GraphLock(0)
    let token = derived.observeValuesNonisolated { change in
        sum.withLock { $0 &+= change.changeset.inserts.count }
    }
    for i in 0..<count { array.append(i) }
    withExtendedLifetime((token, derived)) {}
    return sum.withLock { $0 }
}

/// Sets elements across an array of 1,000, each new value's parity the opposite of the old
/// one's half of the time: the filter sees updates, deletes and inserts.
func setThroughDerived(_ count: Int) -> Int {
    let array = ObservableArray(Array(0..<1_000))
    let derived = [array.filter { $0 % 2 == 0 }, array.map { $0 &* 2 }]
    let sum = GraphLock(0)
    let tokens = derived.map {
        $0.observeValuesNonisolated { change in sum.withLock { $0 &+= change.array.count } }
    }
    for i in 0..<count { try? array.set(i, at: (i &* 7_919) % 1_000) }
    withExtendedLifetime((tokens, derived)) {}
    return sum.withLock { $0 }
}

/// The main-actor counterpart of `valueset` (counted too: its name matches the pattern).
@MainActor @inline(never)
func measuredSectionOnMain(_ count: Int) -> Int {
    let value = ObservableValue(0)
    var sum = 0
    let token = value.observeValues { v in sum &+= v }
    for i in 0..<count { value.set(i) }
    withExtendedLifetime(token) {}
    return sum
}
/// The benchmark's "actor: fed from main" rows: an `EventChannel` sent to on the main actor, to
/// a main-actor closure (`actorsend`) or a nonisolated one (`send`).
@MainActor @inline(never)
func measuredSectionSendOnMain(_ count: Int, nonisolated: Bool) -> Int {
    let channel = EventChannel<Int>()
    // Both closures do the same work (see the benchmark's "actor: fed from main" rows).
    let total = GraphLock(0)
    let token =
        nonisolated
        ? channel.observeValuesNonisolated { v in total.withLock { $0 &+= v } }
        : channel.observeValues { v in total.withLock { $0 &+= v } }
    for i in 0..<count { channel.send(i) }
    withExtendedLifetime(token) {}
    return total.withLock { $0 }
}
/// `arrayappend` on the main actor, to one main-actor closure (`actorappend`).
@MainActor @inline(never)
func measuredSectionAppendOnMain(_ count: Int) -> Int {
    let array = ObservableArray<Int>()
    var inserted = 0
    let token = array.observeValues { change in inserted &+= change.changeset.inserts.count }
    for i in 0..<count { array.append(i) }
    withExtendedLifetime(token) {}
    return inserted
}
/// Appends on the main actor to an array, or across the 4 sections of a sectioned array, observed
/// coalesced by one main-actor closure (`coalescedappend`, `coalescedsections`) or by nobody
/// (`mainappend`, `mainsections`): the difference is what the coalescing costs per change (its
/// one call comes after this returns, on a later turn, uncounted).
@MainActor @inline(never)
func measuredSectionCoalescedOnMain(_ count: Int, sectioned: Bool, observed: Bool) -> Int {
    var calls = 0
    if sectioned {
        let table = ObservableSectionedArray((0..<4).map { ArraySection(metadata: $0, items: [Int]()) })
        let token = observed ? table.observeValuesCoalesced { _ in calls &+= 1 } : nil
        for i in 0..<count { try? table.appendItem(i, toSection: i & 3) }
        withExtendedLifetime(token) {}
        return calls &+ table.sections.count
    }
    let array = ObservableArray<Int>()
    let token = observed ? array.observeValuesCoalesced { _ in calls &+= 1 } : nil
    for i in 0..<count { array.append(i) }
    withExtendedLifetime(token) {}
    return calls &+ array.count
}
/// Sets a value on the main actor, observed coalesced by one main-actor closure (`coalescedvalue`)
/// or by nobody (`mainvalue`): the difference is what the coalescing costs per set (its one call
/// comes after this returns, on a later turn, uncounted).
@MainActor @inline(never)
func measuredSectionCoalescedValueOnMain(_ count: Int, observed: Bool) -> Int {
    var calls = 0
    let value = ObservableValue(-1)
    let token = observed ? value.observeValuesCoalesced { _ in calls &+= 1 } : nil
    for i in 0..<count { value.value = i }
    withExtendedLifetime(token) {}
    return calls &+ value.value
}
switch workload {
case "coalescedvalue", "mainvalue":
    blackHole(measuredSectionCoalescedValueOnMain(n, observed: workload == "coalescedvalue"))
case "coalescedappend", "mainappend", "coalescedsections", "mainsections":
    blackHole(
        measuredSectionCoalescedOnMain(
            n, sectioned: workload.hasSuffix("sections"), observed: workload.hasPrefix("coalesced")))
default: break
}
if workload == "actorset" { blackHole(measuredSectionOnMain(n)) }
if workload == "actorappend" { blackHole(measuredSectionAppendOnMain(n)) }
if workload == "actorsend" || workload == "send" {
    blackHole(measuredSectionSendOnMain(n, nonisolated: workload == "send"))
}

let measuredStart = ContinuousClock.now
let result = measuredSection(
    Fixture(
        workload: workload, rounds: rounds, value: value, subject: subject, observers: observers,
        trackers: trackers, weaks: weaks, closures: closures, fresh: fresh, order: order, hand: hand,
        handTracking: handTracking, handTrackers: handTrackers))
let measuredTime = ContinuousClock.now - measuredStart
blackHole(result)
withExtendedLifetime((observers, trackers, weaks, closures, others, fresh, trackerSideTables)) {}
withExtendedLifetime((handTracking, handTrackers, holder)) {}
withExtendedLifetime(operatorToken) {}
withExtendedLifetime(combineCancellable) {}
print("\(workload) n=\(n): \(description); result \(result); measured section \(measuredTime) (wall clock)")
