import Observation
import ObserverGraph
import Testing

@Observable
final class ObservationCounter: @unchecked Sendable {
    var count = 0
}

@Suite("Observation bridge: an @Observable mirror, and following Observations", .timeLimit(.minutes(3)))
@MainActor
struct ObservationBridgeTests {
    @Test("The mirror shows the value, and withObservationTracking reports each change made on main")
    func mirrorTracksChanges() {
        let credits = ObservableValue(1)
        let mirror = credits.observed()
        #expect(mirror.value == 1)
        let notified = GraphLock(0)
        withObservationTracking {
            _ = mirror.value
        } onChange: {
            notified.withLock { $0 += 1 }
        }
        credits.set(2)
        #expect(mirror.value == 2)
        #expect(notified.withLock { $0 } == 1)
    }

    @Test("A change made on another thread reaches the mirror on the main actor")
    func mirrorFromAnotherThread() async {
        let credits = ObservableValue(0)
        let mirror = credits.observed()
        await Task.detached { credits.value = 9 }.value
        _ = await eventually { mirror.value == 9 }
        #expect(mirror.value == 9)
    }

    @Test("A kit value follows an Observations sequence until the task is cancelled")
    func followObservations() async throws {
        let counter = ObservationCounter()
        let value = ObservableValue(-1)
        var seen: [Int] = []
        let token = value.observeValues { seen.append($0) }
        let task = Task { try await value.follow(Observations { counter.count }) }
        // Each wait has its own deadline: a busy main actor can spend one wait's whole budget.
        #expect(await eventually { value.value == 0 })
        counter.count = 5
        #expect(await eventually { value.value == 5 })
        task.cancel()
        try? await task.value
        counter.count = 6
        try? await Task.sleep(for: .milliseconds(20))
        #expect(value.value == 5)
        #expect(seen == [-1, 0, 5])
        withExtendedLifetime(token) {}
    }
}
