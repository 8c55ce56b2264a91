import Dispatch
import ObserverGraph
import Testing

/// Opens the existentials of the random graph.
private func combined<P: ObservableSource<Int>, Q: ObservableSource<Int>>(_ p: P, _ q: Q) -> DerivedValue<Int>
{
    p.combineLatest(q).map { (3 &* $0 &+ $1) % 1_000_003 }
}

private func combined<P: ObservableSource<Int>, Q: ObservableSource<Int>, R: ObservableSource<Int>>(
    _ p: P, _ q: Q, _ r: R
) -> DerivedValue<Int> {
    p.combineLatest(q, r).map { ($0 &- $1 &+ 2 &* $2) % 1_000_003 }
}

@Suite("Operators: glitch-free propagation")
struct OperatorGlitchTests {
    @Test("Diamond: combineLatest of two maps of one value delivers once per set, never (new, old)")
    func diamond() {
        let x = ObservableValue(1)
        let a = x.map { $0 * 10 }
        let b = x.map { $0 + 1 }
        let c = a.combineLatest(b)
        let recorder = OperatorRecorder(c.map { "\($0.0)/\($0.1)" })
        for value in [2, 3, 4] { x.value = value }
        #expect(recorder.values == ["10/2", "20/3", "30/4", "40/5"])
    }

    @Test("Diamond over a channel: one combined value per send")
    func channelDiamond() {
        let x = EventChannel<Int>()
        let c = x.map { $0 * 2 }.combineLatest(x.map { -$0 })
        let recorder = OperatorRecorder(c.map { $0.0 + $0.1 })
        for value in 1...5 { x.send(value) }
        #expect(recorder.values == [1, 2, 3, 4, 5])
    }

    @Test("3-level diamond: every node recomputes once per set with consistent inputs")
    func threeLevelDiamond() {
        let x = ObservableValue(1)
        let a = x.map { $0 * 2 }
        let b = x.map { $0 * 3 }
        let c = a.combineLatest(b).map { $0 + $1 }  // 5x
        let d = a.map { $0 + 1 }  // 2x + 1
        let e = c.combineLatest(d, x).map { "\($0)|\($1)|\($2)" }
        let recorder = OperatorRecorder(e)
        for value in 2...4 { x.value = value }
        #expect(recorder.values == ["5|3|1", "10|5|2", "15|7|3", "20|9|4"])
    }

    @Test("merge of a diamond passes on both branches' values, once each per send")
    func mergeDiamond() {
        let x = EventChannel<Int>()
        let merged = OperatorRecorder(x.map { $0 * 10 }.merge(x.map { $0 * 100 }))
        x.send(1)
        x.send(2)
        #expect(merged.values == [10, 100, 20, 200])
    }

    @Test(
        "merge passes on one change's values in rank order, whatever order its inputs were made or listed in")
    func mergeInRankOrder() {
        let x = ObservableValue(1)
        // Each merge starts from its inputs' values in rank order (1, then 101). The map's edge
        // from `x` is made before the merge's: the order edges were made in must not decide.
        let shallowFirst = OperatorRecorder(x.merge(x.map { $0 + 100 }))
        let deepFirst = OperatorRecorder(x.map { $0 + 100 }.merge(x))
        let twoDepths = x.map { $0 }.map { $0 + 100 }.merge(x.map { $0 })
        let twoDepthsRecorder = OperatorRecorder(twoDepths)
        let joined = x.merge(x.map { $0 + 100 }).combineLatest(ObservableValue(0)).map { "\($0.0),\($0.1)" }
        let joinedRecorder = OperatorRecorder(joined)
        x.value = 2
        #expect(shallowFirst.values == [101, 2, 102])
        #expect(deepFirst.values == [101, 2, 102])
        #expect(twoDepthsRecorder.values == [101, 2, 102])
        #expect(twoDepths.value == 102)
        // The merge's value after each change is its deepest input's, from the start.
        #expect(joinedRecorder.values == ["101,0", "102,0"])
    }

    @Test("merge: inputs of equal rank in the order listed; a finish only from the last input")
    func mergeEqualRanksAndFinish() {
        let x = ObservableValue(1)
        let a = x.map { $0 * 10 }
        let b = x.map { $0 * 100 }
        let merged = OperatorRecorder(b.merge(a))
        x.value = 2
        #expect(merged.values == [10, 200, 20])
        let y = ObservableValue(5)
        let two = OperatorRecorder(x.merge(y))
        x.finish()
        #expect(two.events == [.value(5)])
        y.value = 6
        y.finish()
        #expect(two.events == [.value(5), .value(6), .finished])
    }

    @Test("100-node random DAGs (seeded) match a reference recomputation after every set")
    func randomDAGs() {
        for seed in [1, 2, 3] as [UInt64] {
            checkRandomDAG(seed: seed, nodeCount: 100, roots: 5, sets: 40)
        }
    }

    /// Node kinds of the random graph and its reference evaluation.
    enum Kind {
        case root
        case map(Int, Int)  // input, added constant
        case combine(Int, Int)  // inputs, combined as 3a + b
        case combine3(Int, Int, Int)  // inputs, combined as a - b + 2c
    }

    func checkRandomDAG(seed: UInt64, nodeCount: Int, roots: Int, sets: Int) {
        var random = SeededGenerator(seed: seed)
        var kinds: [Kind] = []
        var nodes: [any ObservableSource<Int>] = []
        var rootValues: [ObservableValue<Int>] = []
        var ancestors: [Set<Int>] = []
        for index in 0..<nodeCount {
            if index < roots {
                let root = ObservableValue(index)
                rootValues.append(root)
                nodes.append(root)
                kinds.append(.root)
                ancestors.append([index])
                continue
            }
            let pick = { (random: inout SeededGenerator) in Int.random(in: 0..<index, using: &random) }
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let input = pick(&random)
                let constant = Int.random(in: -5...5, using: &random)
                nodes.append(nodes[input].map { ($0 &+ constant) % 1_000_003 })
                kinds.append(.map(input, constant))
                ancestors.append(ancestors[input])
            case 1:
                let (p, q) = (pick(&random), pick(&random))
                nodes.append(combined(nodes[p], nodes[q]))
                kinds.append(.combine(p, q))
                ancestors.append(ancestors[p].union(ancestors[q]))
            default:
                let (p, q, r) = (pick(&random), pick(&random), pick(&random))
                nodes.append(combined(nodes[p], nodes[q], nodes[r]))
                kinds.append(.combine3(p, q, r))
                ancestors.append(ancestors[p].union(ancestors[q]).union(ancestors[r]))
            }
        }
        // One recorder per derived node.
        let recorders = nodes.map { OperatorRecorder($0) }
        var expectedCounts = Array(repeating: 1, count: nodeCount)
        var reference = Array(repeating: 0, count: nodeCount)
        func recompute() {
            for index in 0..<nodeCount {
                switch kinds[index] {
                case .root: reference[index] = rootValues[index].value
                case .map(let input, let constant):
                    reference[index] = (reference[input] &+ constant) % 1_000_003
                case .combine(let p, let q):
                    reference[index] = (3 &* reference[p] &+ reference[q]) % 1_000_003
                case .combine3(let p, let q, let r):
                    reference[index] = (reference[p] &- reference[q] &+ 2 &* reference[r]) % 1_000_003
                }
            }
        }
        recompute()
        for _ in 0..<sets {
            let root = Int.random(in: 0..<roots, using: &random)
            rootValues[root].value = Int.random(in: 0..<1000, using: &random)
            recompute()
            for index in 0..<nodeCount where ancestors[index].contains(root) { expectedCounts[index] += 1 }
            for index in 0..<nodeCount {
                let values = recorders[index].values
                // Exactly one delivery per set that reaches the node, and it is consistent.
                #expect(values.count == expectedCounts[index], "seed \(seed) node \(index)")
                #expect(values.last == reference[index], "seed \(seed) node \(index)")
            }
        }
        withExtendedLifetime(nodes) {}
    }

    @Test("Concurrent sets into a chain: every set arrives once, the chain ends consistent")
    func concurrentSets() {
        let x = ObservableValue(0)
        let chain = x.map { $0 * 2 }.combineLatest(x.map { $0 * 3 }).map { $0.0 * 3 == $0.1 * 2 }
        let recorder = OperatorRecorder(chain)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 1...250 { x.value = worker * 1000 + step }
        }
        #expect(recorder.values.count == 1001)
        #expect(recorder.values.allSatisfy { $0 })
    }
}
