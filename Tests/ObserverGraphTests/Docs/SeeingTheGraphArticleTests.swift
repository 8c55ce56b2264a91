import ObserverGraph
import Testing

// The code block of the article "Seeing the graph" (ObserverGraph.docc/SeeingTheGraph.md),
// verbatim: DocSnippetTests fails when a block of the article is not found here. Its `print`
// calls are recorded, and checked against the article's text.

@Suite("Docs: Seeing the graph")
struct SeeingTheGraphArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    final class Store: GraphObservable {
        let graphNode = GraphNode()
        var graphDisplayName: String { "store" }
    }

    final class Screen: GraphTrackingObserver {
        let graphNode = GraphNode()
        var graphDisplayName: String { "screen" }
    }

    @Test("The snapshot's report, Mermaid and DOT texts are the article's")
    func snapshot() {
        let store = Store()
        let screen = Screen()
        screen.subscribe(to: store)
        let snapshot = GraphSnapshot(observables: [store])  // and/or trackingObservers: [...]
        print(snapshot.report)  // "consistent: 2 nodes, 1 edge" and every finding
        print(snapshot.mermaid)  // Mermaid: GitHub renders it in a mermaid code block
        print(snapshot.dot)  // Graphviz: dot -Tsvg graph.dot > graph.svg
        #expect(
            output.all == [
                "consistent: 2 nodes, 1 edge",
                """
                flowchart LR
                    n0["store"]
                    n1("screen")
                    n0 ==> n1

                """,
                """
                digraph ObserverGraph {
                    rankdir=LR;
                    n0 [label="store", shape=box];
                    n1 [label="screen", shape=box, style=rounded];
                    n0 -> n1 [penwidth=2];
                }

                """,
            ])
    }
}
