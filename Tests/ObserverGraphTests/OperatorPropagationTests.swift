import Dispatch
import ObserverGraph
import Testing

@Suite("Propagation: one queue per connected graph, and no set ever waits for another thread")
struct OperatorPropagationTests {
    @Test("A set while another thread runs a pass of the same graph is queued, not waited for")
    func setWhileAnotherThreadPropagates() {
        let x = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let doubled = x.heldMap(gate, times: 2)
        let recorder = OperatorRecorder(doubled)
        let first = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        x.value = 2  // returns at once: the thread running the held pass will propagate it
        #expect(!first.returned(within: 0.05))
        #expect(doubled.value == 0)
        #expect(recorder.values == [0])
        gate.open()
        #expect(first.returned(within: 10))
        // The runner propagated both, in the order the sets arrived, before its set returned.
        #expect(recorder.values == [0, 2, 4])
        #expect(doubled.value == 4)
    }

    @Test("Unrelated graphs propagate at once: a set returns with its own derived values delivered")
    func unrelatedGraphsDoNotWait() {
        let x = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let held = x.heldMap(gate, times: 1)
        let y = ObservableValue(0)
        let label = y.map { "y=\($0)" }
        let labels = OperatorRecorder(label)
        let first = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        y.value = 7
        #expect(label.value == "y=7")
        #expect(labels.values == ["y=0", "y=7"])
        gate.open()
        #expect(first.returned(within: 10))
        #expect(held.value == 1)
    }

    @Test("A set on the main actor while a thread runs a pass of the same graph returns at once")
    @MainActor
    func mainActorSetDoesNotBlock() async {
        let x = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let doubled = x.heldMap(gate, times: 2)
        let first = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        x.set(2)
        #expect(doubled.value == 0)  // queued behind the held pass
        gate.open()
        #expect(first.returned(within: 10))
        #expect(doubled.value == 4)
    }

    @Test("Joining two graphs while both propagate on other threads: each change arrives once, consistent")
    func joinWhileBothPropagate() {
        let a = ObservableValue(0)
        let b = ObservableValue(0)
        let gateA = HoldGate(holding: 1)
        let gateB = HoldGate(holding: 1)
        let twiceA = a.heldMap(gateA, times: 2)
        let thriceB = b.heldMap(gateB, times: 3)
        let setA = BackgroundCall { a.value = 1 }
        let setB = BackgroundCall { b.value = 1 }
        #expect(gateA.waitUntilHeld())
        #expect(gateB.waitUntilHeld())
        // Both passes are held inside their maps; the join is made now. It starts when both
        // passes have ended: until then it has no value, and then it has both changes.
        let pairs = twiceA.combineLatest(thriceB).map { "\($0.0),\($0.1)" }
        let recorder = OperatorRecorder(pairs)
        #expect(recorder.values == [])
        #expect(pairs.value == nil)
        gateA.open()
        #expect(setA.returned(within: 10))
        #expect(recorder.values == [])  // the pass of `b` still runs
        gateB.open()
        #expect(setB.returned(within: 10))
        #expect(recorder.values == ["2,3"])
        // One component now: one set of either source is one pass, and the join follows it.
        a.value = 5
        b.value = 4
        #expect(recorder.values.suffix(2) == ["10,3", "10,12"])
        #expect(pairs.value == "10,12")
    }

    @Test("A diamond joined to another graph while its source propagates: one consistent result")
    func diamondJoinedMidPass() {
        let x = ObservableValue(0)
        let y = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let a = x.heldMap(gate, times: 2)
        let b = x.map { $0 * 3 }
        let setX = BackgroundCall { x.value = 1 }
        #expect(gate.waitUntilHeld())
        // The pass of x is held before `a` emits; the join of x's graph and y's is made now.
        let joined = a.combineLatest(b, y).map { "\($0.0),\($0.1),\($0.2)" }
        let recorder = OperatorRecorder(joined)
        gate.open()
        #expect(setX.returned(within: 10))
        // Never "2,0,0" nor "0,3,0": the join starts once the held change has reached both
        // branches.
        #expect(recorder.values == ["2,3,0"])
        y.value = 1
        #expect(recorder.values == ["2,3,0", "2,3,1"])
    }

    @Test("flatMapLatest switching to an inner source another thread is propagating")
    func switchIntoARunningGraph() {
        let outer = ObservableValue(0)
        let inner = ObservableValue(0)
        let gate = HoldGate(holding: 1)
        let scaled = inner.heldMap(gate, times: 10)
        let idle = ObservableValue(-1)
        let followed = outer.flatMapLatest { $0 == 0 ? idle.map { $0 } : scaled }
        let recorder = OperatorRecorder(followed)
        let setInner = BackgroundCall { inner.value = 1 }
        #expect(gate.waitUntilHeld())
        outer.value = 1  // switches to `scaled`, whose latest value is still 0
        #expect(followed.value == 0)
        gate.open()
        #expect(setInner.returned(within: 10))
        #expect(recorder.values == [-1, 0, 10])
        inner.value = 2
        #expect(recorder.values == [-1, 0, 10, 20])
    }

    @Test("Stress: threads set their own graphs while another joins them; every join ends consistent")
    func joinsUnderLoad() {
        let sources = (0..<4).map { ObservableValue($0) }
        let mapped = sources.map { source in source.map { $0 * 2 } }
        let pairs = (0..<40).map { step in (step % 4, (step / 4 + step + 1) % 4) }.filter { $0.0 != $0.1 }
        let joins = GraphLock<[DerivedValue<Bool>]>([])
        let recorders = GraphLock<[OperatorRecorder<Bool>]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            if worker == 4 {
                for (i, j) in pairs {
                    let join = mapped[i].combineLatest(mapped[j], sources[i]).map { $0.0 == $0.2 * 2 }
                    let recorder = OperatorRecorder(join)
                    joins.withLock { $0.append(join) }
                    recorders.withLock { $0.append(recorder) }
                }
            } else {
                for step in 1...300 { sources[worker].value = step }
            }
        }
        // A last set of each source reaches every join, in one component now.
        for source in sources { source.value = 1000 }
        let all = recorders.withLock { $0 }
        #expect(all.count == pairs.count)
        for recorder in all {
            #expect(recorder.values.last == true)
            // `combineLatest(mapped[i], …, sources[i])` is a diamond over sources[i]: every change
            // delivered is consistent. Only the value a join starts from may mix one change with
            // the previous one, when the join was built while another thread was in the middle of
            // propagating that change (the documented construction race); the pass delivers the
            // consistent value right after.
            #expect(recorder.values.dropFirst().allSatisfy { $0 })
        }
        withExtendedLifetime(joins) {}
    }
}
