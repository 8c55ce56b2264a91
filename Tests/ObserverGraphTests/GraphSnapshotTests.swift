import Foundation
import ObserverGraph
import Testing

// Objects with fixed display names, so that exports can be compared as text.

private final class Source: GraphObservable, @unchecked Sendable {
    let graphNode = GraphNode()
    let graphDisplayName: String
    init(_ name: String) { graphDisplayName = name }
}

private final class Sink: GraphObserver, @unchecked Sendable {
    let graphDisplayName: String
    init(_ name: String) { graphDisplayName = name }
}

private final class Follower: GraphTrackingObserver, @unchecked Sendable {
    let graphNode = GraphNode()
    let graphDisplayName: String
    init(_ name: String) { graphDisplayName = name }
}

private final class Relay: GraphObservable, GraphTrackingObserver, @unchecked Sendable {
    let graphNode = GraphNode()
    let graphDisplayName: String
    init(_ name: String) { graphDisplayName = name }
}

private struct Logger: GraphObserver {
    let observerID = ObserverID()
    let graphDisplayName: String
}

/// A struct observer that owns objects: what the graph keeps alive by holding it.
private struct Keeper: GraphObserver {
    let observerID = ObserverID()
    let graphDisplayName: String
    let kept: AnyObject?
    var more: [Payload?] = []
}

/// The small graph of the README: a wallet, its observers, and a queue that relays prices.
private struct SmallGraph {
    let wallet = Source("wallet")
    let label = Sink("label")
    let dashboard = Follower("dashboard")
    let queue = Relay("queue")
    let screen = Follower("screen")
    let prices = Source("prices")
    let ticker = Sink("ticker")

    init() {
        wallet.addObserver(label)
        wallet.addObserver(dashboard)
        wallet.addObserver(queue)
        wallet.addObserver(Logger(graphDisplayName: "logger"))
        queue.addObserver(screen)
        prices.addObserver(queue)
        prices.addObserver(ticker)
    }
}

@Suite("Graph snapshot: discovery, export, report, consistency under change")
struct GraphSnapshotTests {
    @Test("Graphviz DOT of a small known graph")
    func dotExport() {
        let graph = SmallGraph()
        let snapshot = GraphSnapshot(observables: [graph.wallet])
        #expect(
            snapshot.dot == """
                digraph ObserverGraph {
                    rankdir=LR;
                    n0 [label="wallet", shape=box];
                    n1 [label="label", shape=ellipse];
                    n2 [label="dashboard", shape=box, style=rounded];
                    n3 [label="queue", shape=box, peripheries=2];
                    n4 [label="logger", shape=hexagon];
                    n5 [label="screen", shape=box, style=rounded];
                    n6 [label="prices", shape=box];
                    n7 [label="ticker", shape=ellipse];
                    n0 -> n1;
                    n0 -> n2 [penwidth=2];
                    n0 -> n3 [penwidth=2];
                    n0 -> n4;
                    n3 -> n5 [penwidth=2];
                    n6 -> n3 [penwidth=2];
                    n6 -> n7;
                }

                """)
        withExtendedLifetime(graph) {}
    }

    @Test("The README's picture is drawn from this graph's DOT (docs/graph-snapshot.dot)")
    func readmePicture() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/graph-snapshot.dot").standardized
        let committed = try String(contentsOf: docs, encoding: .utf8)
        let graph = SmallGraph()
        #expect(GraphSnapshot(observables: [graph.wallet]).dot == committed)
        withExtendedLifetime(graph) {}
    }

    @Test("Mermaid of a small known graph")
    func mermaidExport() {
        let graph = SmallGraph()
        let snapshot = GraphSnapshot(observables: [graph.wallet])
        #expect(
            snapshot.mermaid == """
                flowchart LR
                    n0["wallet"]
                    n1(["label"])
                    n2("dashboard")
                    n3[["queue"]]
                    n4{{"logger"}}
                    n5("screen")
                    n6["prices"]
                    n7(["ticker"])
                    n0 --> n1
                    n0 ==> n2
                    n0 ==> n3
                    n0 --> n4
                    n3 ==> n5
                    n6 ==> n3
                    n6 --> n7

                """)
        #expect(snapshot.isConsistent)
        #expect(snapshot.report == "consistent: 8 nodes, 7 edges\nheld by value: logger, held by wallet")
        withExtendedLifetime(graph) {}
    }

    @Test("Nodes, roles and edges; discovery follows edges both ways from any root")
    func discovery() {
        let graph = SmallGraph()
        let fromWallet = GraphSnapshot(observables: [graph.wallet])
        #expect(
            fromWallet.nodes.map(\.name) == [
                "wallet", "label", "dashboard", "queue", "logger", "screen", "prices", "ticker",
            ])
        #expect(fromWallet.nodes[0].roles == [.observable])
        #expect(fromWallet.nodes[1].roles == [.observer])
        #expect(fromWallet.nodes[2].roles == [.observer, .tracking])
        #expect(fromWallet.nodes[3].roles == [.observable, .observer, .tracking])
        #expect(fromWallet.nodes[4].roles == [.observer, .heldByValue])
        let tracked = fromWallet.edges.filter(\.isTracked).map { [$0.observable, $0.observer] }
        #expect(tracked == [[0, 2], [0, 3], [3, 5], [6, 3]])

        // From the far end: the screen tracks the queue, which tracks the wallet and the prices.
        let fromScreen = GraphSnapshot(trackingObservers: [graph.screen])
        #expect(
            fromScreen.nodes.map(\.name) == [
                "screen", "queue", "wallet", "prices", "label", "dashboard", "logger", "ticker",
            ])
        #expect(
            Set(
                fromScreen.edges.map {
                    [fromScreen.nodes[$0.observable].name, fromScreen.nodes[$0.observer].name]
                })
                == Set(
                    fromWallet.edges.map {
                        [fromWallet.nodes[$0.observable].name, fromWallet.nodes[$0.observer].name]
                    }))

        // A plain observer does not know what it observes: the prices are out of reach from here.
        let alone = Source("alone")
        alone.addObserver(graph.ticker)
        let fromAlone = GraphSnapshot(observables: [alone])
        #expect(fromAlone.nodes.map(\.name) == ["alone", "ticker"])
    }

    @Test("Values and closure observers appear with their default names")
    func valuesLayer() {
        let credits = ObservableValue(0)
        let token = credits.observeValuesNonisolated { _ in }
        let snapshot = GraphSnapshot(observables: [credits])
        #expect(snapshot.nodes.count == 2 && snapshot.edges.count == 1)
        #expect(snapshot.nodes[0].name == credits.graphDisplayName)
        #expect(snapshot.nodes[0].name.hasPrefix("ObservableValue<Int>@"))
        #expect(snapshot.nodes[1].name.hasPrefix("closure@"))
        token.cancel()
        #expect(GraphSnapshot(observables: [credits]).nodes.count == 1)
    }

    @Test("Names are escaped for DOT and Mermaid")
    func escaping() {
        let odd = Source("Observable<[Item]> \"x\" #1 & \\")
        let snapshot = GraphSnapshot(observables: [odd])
        #expect(snapshot.dot.contains(#"n0 [label="Observable<[Item]> \"x\" #1 & \\", shape=box];"#))
        #expect(snapshot.mermaid.contains(#"n0["Observable#lt;[Item]#gt; #quot;x#quot; #35;1 #amp; \"]"#))
    }

    @Test("A line break in a name: escaped in DOT, a space in Mermaid")
    func lineBreakInAName() {
        let snapshot = GraphSnapshot(observables: [Source("two\nlines")])
        #expect(snapshot.mermaid == "flowchart LR\n    n0[\"two lines\"]\n")
        #expect(snapshot.dot.contains(#"n0 [label="two\nlines", shape=box];"#))
    }

    @Test("Report: dangling entries, struct observers held by value, and the objects they keep alive")
    func report() {
        let wallet = Source("wallet")
        do {
            let gone = Sink("gone")
            wallet.addObserver(gone)
        }
        let deinits = Counters()
        let keeper = Keeper(graphDisplayName: "keeper", kept: wallet, more: [nil, Payload(deinits: deinits)])
        wallet.addObserver(keeper)
        let snapshot = GraphSnapshot(observables: [wallet])
        #expect(snapshot.isConsistent)
        #expect(snapshot.danglingEntries.count == 1)
        #expect(snapshot.valueObservers.count == 1)
        #expect(snapshot.valueObservers[0].ownedNodes == [0])
        #expect(snapshot.valueObservers[0].ownedObjects.count == 2)
        #expect(snapshot.valueObservers[0].ownedObjects[0] == "wallet")
        #expect(snapshot.valueObservers[0].ownedObjects[1].hasPrefix("Payload@"))
        let payloadName = snapshot.valueObservers[0].ownedObjects[1]
        #expect(
            snapshot.report == """
                consistent: 2 nodes, 1 edge
                dangling: wallet lists a deallocated observer
                held by value: keeper, held by wallet, keeps alive wallet, \(payloadName) \
                (retain cycle with wallet)
                """)

        // Unsubscribing breaks the cycle and releases what the struct held.
        wallet.removeObserver(keeper)
        withExtendedLifetime(keeper) {}
        #expect(deinits["payload"] == 0, "the test's own copy still holds the payload")
        #expect(GraphSnapshot(observables: [wallet]).valueObservers.isEmpty)
    }

    @Test("A snapshot taken while other threads change the graph is internally consistent and closed")
    func snapshotDuringChange() {
        let subjects = (0..<3).map { Source("s\($0)") }
        let relays = (0..<4).map { Relay("r\($0)") }
        let followers = (0..<3).map { Follower("f\($0)") }
        let observables: [any GraphObservable & Sendable] = subjects + relays
        let trackers: [any GraphTrackingObserver & Sendable] = relays + followers
        let problems = Counters()
        let seen = Counters()
        race(threads: 4) { thread in
            var random = SeededGenerator(seed: UInt64(thread) &+ 7)
            if thread == 0 {
                // The snapshots must overlap the changes however the threads are scheduled (a
                // changing thread can do all its work in one time slice): they start once every
                // changing thread has started, each waits until the changes moved on since the
                // previous one, and the changing threads go on until 300 snapshots were taken.
                let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
                func waitFor(_ condition: () -> Bool) {
                    while !condition() && DispatchTime.now().uptimeNanoseconds < deadline {
                        Thread.sleep(forTimeInterval: 0.000_05)
                    }
                }
                waitFor { seen["changers started"] == 3 }
                var taken = 0
                while taken < 300 {
                    let changes = seen["changes"]
                    waitFor { seen["changes"] >= changes + 10 || seen["changers done"] == 3 }
                    taken += 1
                    seen.bump("snapshots")
                    let snapshot = GraphSnapshot(observables: [subjects[0]])
                    seen.bump("nodes", by: snapshot.nodes.count)
                    problems.bump("inconsistent", by: snapshot.isConsistent ? 0 : 1)
                    problems.bump("unreachable", by: Self.unreachable(in: snapshot))
                    problems.bump("duplicate edges", by: snapshot.edges.count - Set(snapshot.edges).count)
                    let names = snapshot.nodes.map(\.name).filter { !$0.hasPrefix("temp") }
                    problems.bump("duplicate nodes", by: names.count - Set(names).count)
                    for edge in snapshot.edges where edge.isTracked {
                        if !snapshot.nodes[edge.observer].roles.contains(.tracking) { problems.bump("roles") }
                    }
                }
                return
            }
            seen.bump("changers started")
            var i = 0
            while i < 3_000 || (seen["snapshots"] < 300 && i < 1_000_000) {
                i += 1
                seen.bump("changes")
                let observable = observables.randomElement(using: &random)!
                let tracker = trackers.randomElement(using: &random)!
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5: observable.addObserver(tracker)
                case 5..<8: observable.removeObserver(tracker)
                case 8: tracker.unsubscribeFromAll()
                default:
                    let temporary = Sink("temp\(thread)-\(i)")
                    observable.addObserver(temporary)
                    if Bool.random(using: &random) { observable.removeObserver(temporary) }
                }
            }
            seen.bump("changers done")
        }
        #expect(problems["inconsistent"] == 0)
        #expect(problems["unreachable"] == 0)
        #expect(problems["duplicate edges"] == 0)
        #expect(problems["duplicate nodes"] == 0)
        #expect(problems["roles"] == 0)
        #expect(seen["nodes"] > seen["snapshots"], "the snapshots must actually see a graph")

        // Quiet again: the snapshot sees exactly what the objects themselves say.
        let snapshot = GraphSnapshot(observables: observables, trackingObservers: trackers)
        #expect(snapshot.isConsistent)
        var expected: Set<[String]> = []
        for observable in observables {
            for observer in observable.observers {
                expected.insert([observable.graphDisplayName, observer.graphDisplayName])
            }
        }
        let actual = Set(
            snapshot.edges.map { [snapshot.nodes[$0.observable].name, snapshot.nodes[$0.observer].name] })
        #expect(actual == expected)
        withExtendedLifetime((subjects, relays, followers)) {}  // the graph holds them weakly
    }

    /// How many nodes of `snapshot` cannot be reached from its first node along its edges (either
    /// direction): a snapshot holds only what is reachable from its roots.
    private static func unreachable(in snapshot: GraphSnapshot) -> Int {
        var neighbours: [Int: [Int]] = [:]
        for edge in snapshot.edges {
            neighbours[edge.observable, default: []].append(edge.observer)
            neighbours[edge.observer, default: []].append(edge.observable)
        }
        var reached: Set<Int> = [0]
        var stack = [0]
        while let node = stack.popLast() {
            for next in neighbours[node, default: []] where reached.insert(next).inserted {
                stack.append(next)
            }
        }
        return snapshot.nodes.count - reached.count
    }
}
