import ObserverGraph
import Testing

// The code block of the catalog's landing page (ObserverGraph.docc/ObserverGraph.md),
// verbatim: DocSnippetTests fails when a block of the page is not found here. It runs on the
// main actor, as the top-level code of an app does.

@Suite("Docs: the ObserverGraph landing page")
@MainActor
struct LandingPageTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    @Test("The first example prints what its comments say")
    func firstExample() {
        let credits = ObservableValue(0)
        let token = credits.observeValues { print("credits:", $0) }  // prints "credits: 0" at once
        credits.set(5)  // prints "credits: 5"
        #expect(output.all == ["credits: 0", "credits: 5"])
        token.cancel()
    }
}
