import Dispatch
import ObserverGraph
import Testing

/// A join (`combineLatest`, `merge`) built while a pass of its inputs' graph runs starts at the
/// end of that pass: never from inputs one change has reached only in part.
@Suite("Joins built while their graph propagates start from consistent inputs", .timeLimit(.minutes(3)))
struct JoinBuildTests {
    @Test("Built between the two branches of a held change: no value until it ends, then both")
    func builtBetweenBranches() {
        let x = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let doubled = x.map { $0 * 2 }  // runs first: it has 2 when the pass is held
        let tripled = x.heldMap(gate, times: 3)
        let setX = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        #expect(doubled.value == 2)
        #expect(tripled.value == 0)
        let pairs = doubled.combineLatest(tripled)
        let merged = doubled.merge(tripled)
        let recorder = OperatorRecorder(pairs.map { "\($0.0),\($0.1)" })
        let mergedRecorder = OperatorRecorder(merged)
        // Never "2,0": one change has reached `doubled` and not yet `tripled`.
        #expect(pairs.value == nil)
        #expect(merged.value == nil)
        #expect(recorder.values == [])
        gate.open()
        #expect(setX.returned(within: 10))
        #expect(recorder.values == ["2,3"])
        #expect(pairs.value.map { "\($0.0),\($0.1)" } == "2,3")
        #expect(mergedRecorder.values == [2, 3])  // each input's value, in the inputs' order
        x.value = 2
        #expect(recorder.values == ["2,3", "4,6"])
        #expect(mergedRecorder.values == [2, 3, 4, 6])
    }

    @Test("Built on an idle graph: the value at once, on the builder's thread")
    func builtOnIdleGraph() {
        let x = ObservableValue(1)
        let y = ObservableValue(10)
        let sums = x.combineLatest(y).map { $0.0 + $0.1 }
        #expect(sums.value == 11)
        let recorder = OperatorRecorder(sums)
        y.value = 20
        #expect(recorder.values == [11, 21])
    }

    @Test(
        "Built by an observer during a pass of its graph: it starts after that pass, before the set returns")
    func builtInsideAPass() {
        let x = ObservableValue(0)
        let doubled = x.map { $0 * 2 }
        let tripled = x.map { $0 * 3 }
        let built = GraphLock<DerivedValue<(Int, Int)>?>(nil)
        let seenInside = GraphLock<[Bool]>([])
        // A derived value's observer is called by the pass, before it ends.
        let token = doubled.observeValuesNonisolated { value in
            guard value == 2 else { return }
            let pairs = doubled.combineLatest(tripled)
            seenInside.withLock { $0.append(pairs.value == nil) }
            built.withLock { $0 = pairs }
        }
        x.value = 1
        #expect(seenInside.withLock { $0 } == [true])
        #expect(built.withLock { $0 }?.value.map { "\($0.0),\($0.1)" } == "2,3")
        withExtendedLifetime(token) {}
    }

    @Test("Built by flatMapLatest's transform during a pass: its first value follows in the same set")
    func builtByFlatMapLatest() {
        let x = ObservableValue(0)
        let doubled = x.map { $0 * 2 }
        let tripled = x.map { $0 * 3 }
        let followed = x.flatMapLatest { value in
            doubled.combineLatest(tripled).map { "\(value):\($0.0),\($0.1)" }
        }
        let recorder = OperatorRecorder(followed)
        #expect(followed.value == "0:0,0")
        x.value = 1
        #expect(recorder.values == ["0:0,0", "1:2,3"])
        x.value = 2
        #expect(recorder.values == ["0:0,0", "1:2,3", "2:4,6"])
        #expect(followed.value == "2:4,6")
    }

    @Test("Released before its turn: no edge is made, nothing is kept alive")
    func releasedBeforeItsTurn() {
        let x = ObservableValue(0)
        let y = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let doubled = x.heldMap(gate, times: 2)
        let setX = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        weak var weakJoin: DerivedValue<(Int, Int)>?
        weak var weakNode: _OperatorNode<(Int, Int)>?
        do {
            let join = doubled.combineLatest(y)
            weakJoin = join
            weakNode = join._operatorNodeForNewEdge()
        }
        #expect(weakJoin == nil)
        gate.open()
        #expect(setX.returned(within: 10))
        // The queued build ran after the pass, found its value released, and made no edge.
        #expect(weakNode == nil)
        y.value = 1
        #expect(weakNode == nil)
    }

    @Test(
        "Stress: joins built on one thread while another sets their source: every value consistent",
        arguments: [0, 1])
    func joinsBuiltUnderSets(variant: Int) {
        let x = ObservableValue(0)
        let doubled = x.map { $0 * 2 }
        // Slow, so that builds often land between the branches of one change.
        let tripled = x.map { value -> Int in
            var spin = 0
            for step in 0..<200 { spin &+= step }
            return value * 3 + (spin == -1 ? 1 : 0)
        }
        // A bounded run of sets: a builder that finds the graph idle runs the passes queued
        // while it builds (the thread running passes propagates what arrives meanwhile), so an
        // endless setter would keep it busy for ever.
        let stop = GraphLock(false)
        let setter = BackgroundCall {
            for value in 1...20_000 {
                if stop.withLock({ $0 }) { break }
                x.value = value
            }
        }
        let mixed = GraphLock<[String]>([])
        let consistent: @Sendable (Int, Int) -> Bool = { $0 % 2 == 0 && $0 / 2 * 3 == $1 }
        var checked = 0
        // 2,000 builds, and more (a bounded number) until one found its start value: on a loaded
        // machine every build of the first 2,000 may land while a pass runs, and start unset.
        for iteration in 0..<20_000 {
            if iteration >= 2_000 && checked > 0 { break }
            let pairs =
                variant == 0
                ? doubled.combineLatest(tripled) : tripled.combineLatest(doubled).map { ($0.1, $0.0) }
            if let start = pairs.value {
                checked += 1
                if !consistent(start.0, start.1) { mixed.withLock { $0.append("start \(start)") } }
            }
            let token = pairs.observeValuesNonisolated { pair in
                if !consistent(pair.0, pair.1) { mixed.withLock { $0.append("delivered \(pair)") } }
            }
            token.cancel()
        }
        stop.withLock { $0 = true }
        #expect(setter.returned(within: 30))
        #expect(mixed.withLock { $0 } == [])
        #expect(checked > 0)
        // Idle again: a join built now has its value at once.
        let last = doubled.combineLatest(tripled)
        #expect(last.value.map { consistent($0.0, $0.1) } == true)
    }
}
