import ObserverGraph
import ObserverGraphTesting
import Testing

// The code blocks of the article "Testing with marble diagrams"
// (ObserverGraphTesting.docc/TestingWithMarbleDiagrams.md), verbatim: DocSnippetTests (in
// ObserverGraphTests) fails when a block of the article is not found here. What the blocks print
// is recorded and compared with the article's text blocks.

@Suite("Docs: Testing with marble diagrams")
struct TestingWithMarbleDiagramsArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = GraphLock<[String]>([])

    func print(_ items: Any...) {
        let line = items.map { "\($0)" }.joined(separator: " ")
        output.withLock { $0.append(line) }
    }

    struct ItemGone: Error {}

    @Test("The recorded flow prints the article's diagram, and verifies against it")
    func itemLeavesTheQueue() throws {
        let clock = VirtualClock()
        let items = ObservableValue<[String]>([])
        let done = ObservableValue(true)

        // The queue manager: an item that is no longer done leaves the queue.
        let manager = done.observeValuesNonisolated { isDone in
            if !isDone { items.update { $0.removeAll { $0 == "itemA" } } }
        }

        let queue = RecordingObserver<[String]>(clock: clock, name: "queue")
        let itemDone = RecordingObserver<Bool>(clock: clock, name: "item.Done")
        queue.record(items)  // [] at step 0
        clock.schedule(at: 2) { items.update { $0.append("itemA") } }
        clock.schedule(at: 3) { itemDone.record(done) }  // T: the current value
        clock.schedule(at: 9) { done.value = false }  // "at t=9, set done = false"
        clock.schedule(at: 11) { done.fail(ItemGone()) }
        clock.run()

        let diagram = MarbleDiagram(
            queue.marbleRow { $0.joined(separator: ",") },  // [] and [itemA]
            itemDone.marbleRow { $0 ? "T" : "F" })
        print(diagram)

        // The text block after it in the article.
        #expect(
            output.withLock { $0 } == [
                """
                queue    : []-[itemA]------[]--->
                item.Done: ----------T-----F--X->
                """
            ])

        try diagram.verify(
            matches: """
                queue    : []-[itemA]------[]--->
                item.Done: ----------T-----F--X->
                """)
        #expect(itemDone.history == [.value(true, at: 3), .value(false, at: 9), .failed(ItemGone(), at: 11)])
        manager.cancel()
    }

    @Test("A mismatch reads as the article shows")
    func mismatch() throws {
        let actual = try MarbleDiagram(
            parsing: """
                done: T---F->
                day : 2----->
                """)
        let expected = """
            done: T--F->
            day : 2----->
            """
        #expect(throws: MarbleMismatch.self) { try actual.verify(matches: expected) }
        do {
            try actual.verify(matches: expected)
        } catch {
            #expect(
                "\(error)" == """
                    marble diagrams differ: row 1 (done), step 3: expected F, got -
                    expected:
                    done: T--F->
                    day : 2----->
                    actual:
                    done: T---F->
                    day : 2----->
                    """)
        }
    }
}
