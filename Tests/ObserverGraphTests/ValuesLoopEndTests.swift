import ObserverGraph
import Testing

// A loop over values() that ends early must remove its observer, even while the sequence itself
// is still referenced (the docs create it outside the task, as below). It used to stay until
// the sequence was released, buffering every later value.

@Suite("values(): a loop that ends early removes its observer", .timeLimit(.minutes(3)))
struct ValuesLoopEndTests {
    @Test("break out of for try await over an ObservableValue's values()")
    func breakOnValue() async throws {
        let credits = ObservableValue(0)
        let updates = credits.values()
        let loop = Task {
            var seen: [Int] = []
            for try await value in updates {
                seen.append(value)
                if value == 5 { break }
            }
            return seen
        }
        credits.set(5)
        #expect(try await loop.value == [0, 5])
        #expect(await eventually { credits.observerCount == 0 })
        for value in 6...100 { credits.set(value) }  // nobody buffers these
        #expect(credits.observerCount == 0)
        withExtendedLifetime(updates) {}
    }

    @Test("break out of a loop over a derived value, and over an ObservableState")
    func breakOnDerivedAndState() async throws {
        let source = ObservableValue(1)
        let doubled = source.map { $0 * 2 }
        let doubledValues = doubled.values()
        let derivedLoop = Task {
            for try await value in doubledValues where value == 2 { break }
        }
        try await derivedLoop.value
        #expect(await eventually { doubled.observerCount == 0 })

        let state = ObservableState("a")
        let states = state.values()
        let stateLoop = Task {
            for await value in states where value == "a" { break }
        }
        await stateLoop.value
        #expect(await eventually { state.observerCount == 0 })
        withExtendedLifetime((doubledValues, states)) {}
    }

    @Test("A sequence dropped without a loop removes its observer; an error thrown in the loop too")
    func droppedAndThrown() async {
        let channel = EventChannel<Int>()
        do {
            let unused = channel.values()
            #expect(channel.observerCount == 1)
            withExtendedLifetime(unused) {}
        }
        #expect(await eventually { channel.observerCount == 0 })

        struct Stop: Error {}
        let values = channel.values()
        let loop = Task {
            for try await value in values where value == 3 { throw Stop() }
        }
        channel.send(3)
        #expect(await (try? loop.value) == nil)
        #expect(await eventually { channel.observerCount == 0 })
        withExtendedLifetime(values) {}
    }
}
