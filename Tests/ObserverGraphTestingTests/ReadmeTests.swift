import ObserverGraph
import ObserverGraphTesting
import Testing

// The README's "Seeing what happens" marble example, verbatim where it can be.

private struct ItemGone: Error {}

@Suite("README examples: seeing what happens")
struct ReadmeTests {
    @Test("The marble example prints the diagram the README shows, and verifies against it")
    func marbleExample() throws {
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
        #expect(
            diagram.description == """
                queue    : []-[itemA]------[]--->
                item.Done: ----------T-----F--X->
                """)
        try diagram.verify(
            matches: """
                queue    : []-[itemA]------[]--->
                item.Done: ----------T-----F--X->
                """)
        #expect(itemDone.history == [.value(true, at: 3), .value(false, at: 9), .failed(ItemGone(), at: 11)])
        manager.cancel()
    }
}
