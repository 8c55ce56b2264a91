import ObserverGraph
import Testing

// The code block of the article "Guarantees and reentrancy"
// (ObserverGraph.docc/GuaranteesAndReentrancy.md), verbatim: DocSnippetTests fails when a block
// of the article is not found here. Its `print` calls are recorded, and checked against its
// comments.

@Suite("Docs: Guarantees and reentrancy")
struct GuaranteesArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    final class Bell: GraphObservable {
        let graphNode = GraphNode()
    }

    final class Listener: GraphObserver {
        let name: String
        var rings = 0
        init(_ name: String) { self.name = name }
    }

    @Test("Removed and added during a broadcast: the policy the article states")
    func reentrancy() {
        let bell = Bell()
        let first = Listener("first")
        let second = Listener("second")
        let late = Listener("late")
        bell.addObserver(first)
        bell.addObserver(second)
        let reached = bell.broadcast(as: Listener.self) { listener in
            listener.rings += 1
            if listener === first {
                bell.removeObserver(second)  // removed during the broadcast: not called after this
                bell.addObserver(late)  // added during the broadcast: called by the next one
            }
        }
        // reached == 1: only first rang; second and late did not
        print(GraphNode.consistencyViolations(among: [bell.graphNode]))  // []: consistent
        #expect(reached == 1)
        #expect(first.rings == 1 && second.rings == 0 && late.rings == 0)
        #expect(output.all == ["[]"])
        #expect(bell.broadcast(as: Listener.self) { $0.rings += 1 } == 2)
        #expect(first.rings == 2 && second.rings == 0 && late.rings == 1)
    }
}
