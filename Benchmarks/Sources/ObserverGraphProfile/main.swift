// A small plain executable that runs ONE kit workload, for instruction-level profiling:
//
//     valgrind --tool=callgrind --toggle-collect='*measuredSection*' \
//         ObserverGraphProfile subscribe 100000
//
// Only `measuredSection` (and what it calls) is counted, not the set-up. See README.md,
// "Profiling", for the whole recipe (valgrind needs a copy without DWARF 5 debug info).

import ObserverGraph

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

struct Weak {
    weak var object: Obs?
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
    "unsubscribe-tracking": "unsubscribe n tracking observers, oldest first",
    "lookup": "isSubscribed for n subscribed plain observers",
    "lookup-absent": "isSubscribed for n plain observers that are not subscribed",
    "valueset": "set an ObservableValue<Int> observed by one closure, n times",
]

let arguments = CommandLine.arguments
guard arguments.count >= 2, let description = workloads[arguments[1]] else {
    print("usage: ObserverGraphProfile <workload> [n] [rounds]")
    for (name, text) in workloads.sorted(by: { $0.key < $1.key }) { print("  \(name): \(text)") }
    exit(2)
}
let workload = arguments[1]
let n = arguments.count > 2 ? Int(arguments[2]) ?? 1_000 : 1_000
let rounds = arguments.count > 3 ? Int(arguments[3]) ?? 100 : 100
let value = opaque(1)

let observers = (0..<n).map { _ in Obs() }
let trackers = workload.hasSuffix("tracking") ? (0..<n).map { _ in TrackingObs() } : []
let subject = Subject()
let weaks = observers.map { Weak(object: $0) }  // every observer gets its side table up front
let closures: [(Int) -> Void] = observers.map { observer in { observer.receive($0) } }
switch workload {
case "broadcast", "lookup", "unsubscribe":
    for observer in observers { subject.addObserver(observer) }
case "unsubscribe-tracking":
    for tracker in trackers { subject.addObserver(tracker) }
default:
    break
}

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
}

/// The only part callgrind counts (with --toggle-collect='*measuredSection*').
@inline(never)
func measuredSection(_ f: Fixture) -> Int {
    var result = 0
    switch f.workload {
    case "broadcast":
        for _ in 0..<f.rounds { result &+= f.subject.broadcast(as: Obs.self) { $0.receive(f.value) } }
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
    case "unsubscribe":
        for observer in f.observers where f.subject.removeObserver(observer) != nil { result &+= 1 }
    case "subscribe-tracking":
        for tracker in f.trackers where f.subject.addObserver(tracker) != nil { result &+= 1 }
    case "unsubscribe-tracking":
        for tracker in f.trackers where f.subject.removeObserver(tracker) != nil { result &+= 1 }
    case "valueset":
        let value = ObservableValue(0)
        let sum = GraphLock(0)
        let token = value.observeValuesNonisolated { v in sum.withLock { $0 &+= v } }
        for i in 0..<f.observers.count { value.value = i }
        result = sum.withLock { $0 }
        withExtendedLifetime(token) {}
    case "lookup", "lookup-absent":
        for observer in f.observers where f.subject.hasObserver(observer) { result &+= 1 }
    default:
        break
    }
    return result
}

let result = measuredSection(
    Fixture(
        workload: workload, rounds: rounds, value: value, subject: subject, observers: observers,
        trackers: trackers, weaks: weaks, closures: closures))
blackHole(result)
withExtendedLifetime((observers, trackers, weaks, closures)) {}
print("\(workload) n=\(n): \(description); result \(result)")
