import Dispatch
import ObserverGraph
import Testing

// ObservableState is a value that cannot fail, so its values() is a non-throwing sequence. The
// `for await` loops below have no `try`: they compile only because the stream cannot throw.

@Suite("ObservableState: a value that cannot fail, iterated with for await", .timeLimit(.minutes(3)))
struct ObservableStateTests {
    @Test("for await (no try) yields the current value, then every change, and ends on finish")
    func forAwaitWithoutTry() async {
        let credits = ObservableState(0)
        let updates = credits.values()  // observes now
        let loop = Task {
            var seen: [Int] = []
            for await value in updates { seen.append(value) }
            return seen
        }
        credits.set(5)
        credits.update { $0 += 10 }
        credits.value = 20
        #expect(credits.finish())
        #expect(!credits.finish())
        #expect(credits.isFinished)
        #expect(await loop.value == [0, 5, 15, 20])
        credits.value = 99  // ignored after finish
        #expect(credits.value == 20)
    }

    @Test("Cancelling the iterating task removes the observer at once")
    func cancellingRemovesTheObserver() async {
        let state = ObservableState("a")
        let started = GraphLock(false)
        let loop = Task {
            for await _ in state.values() { started.withLock { $0 = true } }
        }
        let observed = await eventually { started.withLock { $0 } && state.observers.count == 1 }
        #expect(observed)
        loop.cancel()
        await loop.value
        let left = await eventually { state.observers.isEmpty }
        #expect(left)
    }

    @Test("Cancelling the task that iterates removes the observer while its iterator still lives")
    func cancellingRemovesTheObserverBeforeTheIteratorGoes() async {
        let state = ObservableState(0)
        let values = state.values()
        let task = Task { () -> (next: Int?, observers: Int) in
            var iterator = values.makeAsyncIterator()
            _ = await iterator.next()  // the current value, 0
            let next = await iterator.next()  // nothing comes: ends when the task is cancelled
            let observers = state.observers.count  // the iterator is alive here
            withExtendedLifetime(iterator) {}
            return (next, observers)
        }
        #expect(state.observers.count == 1)
        task.cancel()
        let (next, observers) = await task.value
        #expect(next == nil)
        #expect(observers == 0)
    }

    @Test("values(bufferingPolicy:) keeps what the policy keeps: the newest value only")
    func bufferingNewest() async {
        let state = ObservableState(0)
        let values = state.values(bufferingPolicy: .bufferingNewest(1))
        state.value = 1
        state.value = 2
        state.value = 3
        state.finish()
        var seen: [Int] = []
        for await value in values { seen.append(value) }
        #expect(seen == [3])
    }

    @Test("On the main actor, a closure observer runs there and a set made there arrives before it returns")
    @MainActor
    func mainActorObserver() {
        let state = ObservableState(1, skipsEqualValues: true)
        var seen: [Int] = []
        let token = state.observeValues { seen.append($0) }
        state.set(2)
        state.set(2)  // equal: skipped
        state.update { $0 *= 10 }
        #expect(seen == [1, 2, 20])
        token.cancel()
        state.set(3)
        #expect(seen == [1, 2, 20])
    }

    @Test("Operators apply; events never include a failure; every observer form delivers")
    func operatorsAndForms() async {
        let state = ObservableState(2)
        let doubled = state.map { $0 * 2 }
        let events = GraphLock<[String]>([])
        let tokenA = doubled.observeValuesNonisolated { value in events.withLock { $0.append("map \(value)") }
        }
        let tokenB = state.observeNonisolated { event in events.withLock { $0.append("event \(event)") } }
        let queue = DispatchQueue(label: "state")
        let onQueue = GraphLock<[Int]>([])
        let tokenC = state.observeValues(on: queue) { value in onQueue.withLock { $0.append(value) } }
        state.value = 3
        state.finish()
        queue.sync {}
        #expect(events.withLock { $0.filter { $0.hasPrefix("map") } } == ["map 4", "map 6"])
        #expect(events.withLock { $0.filter { $0.hasPrefix("event") }.count } == 3)
        #expect(events.withLock { $0.contains { $0.contains("failed") } } == false)
        #expect(onQueue.withLock { $0 } == [2, 3])
        withExtendedLifetime((tokenA, tokenB, tokenC)) {}
    }
}
