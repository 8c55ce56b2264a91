import Testing

// White-box: a snapshot must show a broken edge, which the public API can never produce. The test
// breaks one side of an edge on purpose, through the kit's internal storage, and mends it before
// the objects go: an edge entry names the node at its other end by address, and a node's deinit
// relies on finding each edge on both sides.
@testable import ObserverGraph

private final class Store: GraphObservable {
    let graphNode = GraphNode()
    var graphDisplayName: String { "store" }
}

private final class Screen: GraphTrackingObserver {
    let graphNode = GraphNode()
    var graphDisplayName: String { "screen" }
}

@Suite("Graph snapshot: a broken edge is reported")
struct GraphSnapshotDefectTests {
    @Test("An edge only the observable records is one-sided, in the report, DOT and Mermaid")
    func onlyObservableRecords() {
        let store = Store()
        let screen = Screen()
        store.addObserver(screen)
        let storeKey = ObserverID(store.graphNode)
        let dropped = screen.graphNode._state.withLock { state -> Bool in
            guard state.subscriptions.locate(storeKey) != nil else { return false }
            state.subscriptions.drop(key: storeKey)
            return true
        }
        #expect(dropped)
        defer {
            let removed = store.graphNode._state.withLock {
                $0.observers.remove(key: ObserverID(screen.graphNode))
            }
            withExtendedLifetime(removed) {}
        }
        let snapshot = GraphSnapshot(observables: [store])
        #expect(!snapshot.isConsistent)
        #expect(snapshot.oneSidedEdges.map { [$0.observable, $0.observer] } == [[0, 1]])
        #expect(snapshot.violations.count == 1)
        #expect(
            snapshot.report.hasPrefix(
                "INCONSISTENT: 2 nodes, 1 edge\none-sided edge: store -> screen\nviolation: "))
        #expect(snapshot.dot.contains(#"n0 -> n1 [penwidth=2, color=red, style=dashed, label="one-sided"];"#))
        #expect(snapshot.mermaid.contains("n0 -.->|one-sided| n1"))
    }

    @Test("An edge only the tracking observer records is one-sided and found from the observer")
    func onlyObserverRecords() {
        let store = Store()
        let screen = Screen()
        store.addObserver(screen)
        let removed = store.graphNode._state.withLock {
            $0.observers.remove(key: ObserverID(screen.graphNode))
        }
        #expect(removed != nil)
        withExtendedLifetime(removed) {}
        defer { screen.graphNode._state.withLock { $0.subscriptions.drop(key: ObserverID(store.graphNode)) } }
        let snapshot = GraphSnapshot(trackingObservers: [screen])
        #expect(snapshot.nodes.map(\.name) == ["screen", "store"])
        #expect(snapshot.oneSidedEdges.map { [$0.observable, $0.observer] } == [[1, 0]])
        #expect(!snapshot.isConsistent)
        #expect(snapshot.mermaid.contains("n1 -.->|one-sided| n0"))
    }
}
