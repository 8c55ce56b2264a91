import Foundation
import ObserverGraph
import Testing

/// Counts its deinits, to show that operator closures are released.
final class CapturedTracker: Sendable {
    let deinits: Counters

    init(_ deinits: Counters) {
        self.deinits = deinits
    }

    deinit {
        deinits.bump("tracker")
    }

    func offset(_ value: Int) -> Int { value + 1 }
}

/// Runs `onDeinit` when released.
final class DeinitHook: Sendable {
    let onDeinit: @Sendable () -> Void

    init(_ onDeinit: @escaping @Sendable () -> Void) {
        self.onDeinit = onDeinit
    }

    deinit { onDeinit() }
}

@Suite("Operators: ownership, leaks, graph snapshots")
struct OperatorOwnershipTests {
    @Test(
        "A value an operator node replaces is released with no lock held: its deinit can read the derived value"
    )
    func replacedValueReleasedUnlocked() {
        // Whether a read of the derived value, made on another thread while the replaced
        // value's deinit waits for it, returned within 10 s (far beyond a loaded machine's
        // delay): not while the deinit runs under the node's lock, which the wait keeps held.
        // (Read on the deinit's own thread, it would hang for good.)
        let reads = GraphLock<[Bool]>([])
        let slot = GraphLock<DerivedValue<DeinitHook>?>(nil)
        let source = ObservableValue(0)
        let derived = source.map { value in
            DeinitHook {
                guard value == 0, let derived = slot.withLock({ $0 }) else { return }
                let read = DispatchSemaphore(value: 0)
                onNewThread {
                    _ = derived.value
                    read.signal()
                }
                reads.withLock { $0.append(read.wait(timeout: .now() + 10) == .success) }
            }
        }
        slot.withLock { $0 = derived }
        source.value = 1  // replaces the node's latest value, made for 0
        #expect(reads.withLock { $0 } == [true])
        slot.withLock { $0 = nil }
    }

    /// A chain of ten operators, each closure capturing its own tracker.
    func chain(from x: ObservableValue<Int>, _ deinits: Counters) -> DerivedValue<Int> {
        var node = x.map { [tracker = CapturedTracker(deinits)] in tracker.offset($0) }
        for index in 1..<10 {
            let tracker = CapturedTracker(deinits)
            switch index % 5 {
            case 0: node = node.map { tracker.offset($0) }
            case 1: node = node.filter { tracker.offset($0) > 0 }
            case 2: node = node.removeDuplicates { tracker.offset($0) == tracker.offset($1) }
            case 3: node = node.scan(0) { tracker.offset($0) + $1 }
            default: node = node.compactMap { Optional(tracker.offset($0)) }
            }
        }
        return node
    }

    @Test("A chain of 10 operators lives while its last token lives, then releases everything")
    func tokenKeepsChainAlive() {
        let deinits = Counters()
        weak var weakSource: ObservableValue<Int>?
        weak var weakEnd: DerivedValue<Int>?
        var token: SubscriptionToken?
        let seen = GraphLock<[Int]>([])
        do {
            let x = ObservableValue(0)
            weakSource = x
            let end = chain(from: x, deinits)
            weakEnd = end
            token = end.observeValuesNonisolated { value in seen.withLock { $0.append(value) } }
            x.value = 1
        }
        // Only the token holds the chain (and the chain its source).
        #expect(weakEnd != nil)
        #expect(weakSource != nil)
        weakSource?.value = 2
        #expect(seen.withLock { $0.count } == 3)
        #expect(deinits["tracker"] == 0)
        token?.cancel()
        token = nil
        #expect(weakEnd == nil)
        #expect(weakSource == nil)
        #expect(deinits["tracker"] == 10)
    }

    @Test("Siblings on one source: releasing the first, a middle or the last leaves the others, in order")
    func releasingSiblings() {
        let x = ObservableValue(0)
        let log = GraphLock<[String]>([])
        func sibling(_ name: String) -> (DerivedValue<String>, SubscriptionToken) {
            let derived = x.map { "\(name)\($0)" }
            let token = derived.observeValuesNonisolated { value in log.withLock { $0.append(value) } }
            return (derived, token)
        }
        var a: (DerivedValue<String>, SubscriptionToken)? = sibling("a")
        let b = sibling("b")
        var c: (DerivedValue<String>, SubscriptionToken)? = sibling("c")
        var d: (DerivedValue<String>, SubscriptionToken)? = sibling("d")
        log.withLock { $0 = [] }
        x.value = 1
        a?.1.cancel()
        a = nil  // the first edge of the source's input
        x.value = 2
        c?.1.cancel()
        c = nil  // a middle one
        x.value = 3
        d?.1.cancel()
        d = nil  // the last one
        x.value = 4
        let e = sibling("e")  // after the others
        x.value = 5
        #expect(
            log.withLock { $0 } == [
                "a1", "b1", "c1", "d1", "b2", "c2", "d2", "b3", "d3", "b4", "e4", "b5", "e5",
            ])
        withExtendedLifetime((b, e)) {}
    }

    @Test("The source holds its derived values weakly: dropping the chain releases it at once")
    func sourceHoldsChainWeakly() {
        let deinits = Counters()
        let x = ObservableValue(0)
        weak var weakEnd: DerivedValue<Int>?
        do {
            let end = chain(from: x, deinits)
            weakEnd = end
            #expect(end.value != nil)
        }
        #expect(weakEnd == nil)
        #expect(deinits["tracker"] == 10)
        x.value = 5  // nothing left to propagate to
        #expect(x.value == 5)
    }

    @Test("The event sources of derived values that delivered go with them, joins included")
    func eventSourcesGoWithTheirValues() {
        let x = ObservableValue(0)
        let seen = GraphLock<[Int]>([])
        var nodes: [() -> GraphNode?] = []
        do {
            let doubled = x.map { $0 * 2 }
            let odd = x.map { $0 * 2 + 1 }
            let sum = doubled.combineLatest(odd).map { $0 + $1 }
            for derived in [doubled, odd, sum] {
                weak let node = derived.graphNode
                nodes.append { node }
            }
            let tokens = [doubled, odd, sum].map { derived in
                derived.observeValuesNonisolated { value in seen.withLock { $0.append(value) } }
            }
            x.value = 1
            #expect(nodes.allSatisfy { $0() != nil })
            for token in tokens { token.cancel() }
        }
        // Each value's observers went with its node: none left, and nothing delivered after.
        #expect(nodes.allSatisfy { $0() == nil })
        x.value = 2
        #expect(seen.withLock { $0 } == [0, 1, 1, 2, 3, 5])
    }

    @Test("An operator released by another one's closure during a pass is freed when the pass ends")
    func operatorReleasedDuringAPass() {
        let deinits = Counters()
        let x = ObservableValue(0)
        let victim = GraphLock<DerivedValue<Int>?>(nil)
        let trackersDuringPass = GraphLock<[Int]>([])
        // The first edge of the source's input: it runs first in each pass, and on 1 releases the
        // value built after it, whose edge the same pass has read and calls next.
        let killer = x.map { value -> Int in
            if value == 1 {
                let released = victim.withLock { victim in
                    defer { victim = nil }
                    return victim
                }
                withExtendedLifetime(released) {}
                trackersDuringPass.withLock { $0.append(deinits["tracker"]) }
            }
            return value
        }
        victim.withLock { $0 = x.map { [tracker = CapturedTracker(deinits)] in tracker.offset($0) } }
        x.value = 1
        // The pass could still call the released operator: its closure went after the pass.
        #expect(trackersDuringPass.withLock { $0 } == [0])
        #expect(deinits["tracker"] == 1)
        x.value = 2
        #expect(killer.value == 2)
        #expect(deinits["tracker"] == 1)
    }

    @Test("Operators released in a feedback loop are freed pass by pass, not when the loop ends")
    func operatorsReleasedInAFeedbackLoop() {
        let deinits = Counters()
        let x = ObservableValue(0)
        let y = ObservableValue(0)
        let freedAtStep = GraphLock<[Int]>([])
        // Each delivery builds and drops an operator on `x` inside the pass, then sets `y`, whose
        // change is queued and runs next: the graph never goes idle until the loop stops.
        let token = x.merge(y).observeValuesNonisolated { value in
            guard value > 0, value < 50 else { return }
            do {
                let dropped = x.map { [tracker = CapturedTracker(deinits)] in tracker.offset($0) }
                withExtendedLifetime(dropped) {}
            }
            freedAtStep.withLock { $0.append(deinits["tracker"]) }
            y.value = value + 1
        }
        x.value = 1
        // The operator dropped in one pass is freed before the next pass runs.
        #expect(freedAtStep.withLock { $0 } == Array(0..<49))
        #expect(deinits["tracker"] == 49)
        token.cancel()
    }

    @Test("Stress: operators built and released while another thread sets their source are all freed")
    func operatorsReleasedUnderLoad() async {
        let deinits = Counters()
        let x = ObservableValue(0)
        let done = GraphLock(false)
        let delivered = GraphLock(0)
        race(threads: 2) { thread in
            if thread == 0 {
                for _ in 0..<200 {
                    let derived = x.map { [tracker = CapturedTracker(deinits)] in tracker.offset($0) }
                    let first = GraphLock(false)
                    let token = derived.observeValuesNonisolated { _ in
                        if !first.withLock({ $0 }) { delivered.withLock { $0 += 1 } }
                        first.withLock { $0 = true }
                    }
                    // The value comes first, but not always before `observe` returns: a thread
                    // delivering from the source meanwhile delivers it, after its own deliveries
                    // (one drainer at a time), and a cancel before that would drop it. So wait
                    // for it (10 s at most: a lost first value fails the count below).
                    let deadline = ContinuousClock.now + .seconds(10)
                    while !first.withLock({ $0 }) && ContinuousClock.now < deadline { usleep(20) }
                    token.cancel()
                }
                done.withLock { $0 = true }
            } else {
                var step = 0
                while step < 300 || (step < 50_000 && !done.withLock({ $0 })) {
                    step += 1
                    x.value = step
                }
            }
        }
        // Each operator closure went, whether its edge was removed during a pass or not. A build
        // that met a set may leave what arrived meanwhile to the graph's passes, which hold the
        // operator until that work runs: a few milliseconds later when no set comes (see the
        // article "Guarantees and reentrancy"), so this waits for the last ones.
        #expect(await eventually { deinits["tracker"] == 200 })
        #expect(delivered.withLock { $0 } == 200)  // each observer received a value first
        x.value = -1
        #expect(deinits["tracker"] == 200)
    }

    @Test("A derived value keeps its inputs alive; combineLatest keeps both")
    func derivedKeepsInputs() {
        weak var weakA: ObservableValue<Int>?
        weak var weakB: EventChannel<Int>?
        var combined: DerivedValue<(Int, Int)>?
        do {
            let a = ObservableValue(1)
            let b = EventChannel<Int>()
            weakA = a
            weakB = b
            combined = a.combineLatest(b)
        }
        #expect(weakA != nil && weakB != nil)
        weakB?.send(2)
        #expect(combined?.value == nil)  // a channel input: nothing replayed
        combined = nil
        #expect(weakA == nil && weakB == nil)
    }

    @Test("A snapshot of a chain lists every operator by name, with its edges")
    func snapshotOfChain() {
        let x = ObservableValue(0)
        let y = EventChannel<Int>()
        let end = x.map { $0 + 1 }.filter { $0 > 0 }.removeDuplicates().combineLatest(y.scan(0, +))
        let token = end.observeNonisolated { _ in }
        let snapshot = GraphSnapshot(observables: [x])
        let names = snapshot.nodes.map(\.name)
        for name in ["map", "filter", "removeDuplicates", "scan", "combineLatest"] {
            #expect(names.filter { $0 == name }.count == 1, "\(name) in \(names)")
        }
        func edge(_ from: String, _ to: String) -> Bool {
            snapshot.edges.contains { names[$0.observable] == from && names[$0.observer] == to }
        }
        #expect(edge(x.graphDisplayName, "map"))
        #expect(edge("map", "filter"))
        #expect(edge("filter", "removeDuplicates"))
        #expect(edge("removeDuplicates", "combineLatest"))
        #expect(edge(y.graphDisplayName, "scan"))
        #expect(edge("scan", "combineLatest"))
        #expect(snapshot.isConsistent)
        #expect(snapshot.dot.contains("\"combineLatest\""))
        withExtendedLifetime((end, token)) {}
    }
}
