import Dispatch
import Foundation
import ObserverGraph
import Testing

/// Whether the caller is the thread building an operator (bound around the build), so that an
/// operator closure can be slow on that thread only.
private enum BuildProbe {
    @TaskLocal static var onBuilder = false
}

/// Waits up to ten seconds for `condition`; `false` if it never held.
private func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(50)
    }
    return true
}

/// Whether `values` is a run of consecutive integers ending at `last`.
private func consecutive(_ values: [Int], endingAt last: Int) -> Bool {
    values.last == last && !zip(values, values.dropFirst()).contains { $1 != $0 + 1 }
}

@Suite("Operators built while their source changes: the build ends, and nothing is lost")
struct OperatorBuildHandOffTests {
    /// Builds `x.map` on one thread while another sets `x` to 1 as the builder computes the
    /// start value, and to 2 while it runs 1, then stops: the builder leaves 2 to the graph.
    /// Returns `x` and the map, or `nil` after recording why.
    private func mapWithWorkLeft() -> (ObservableValue<Int>, DerivedValue<Int>)? {
        let x = ObservableValue(0)
        let builderAt = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let setterDid = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let calls = GraphLock(0)
        let timedOut = Counters()
        let made = GraphLock<DerivedValue<Int>?>(nil)
        race(threads: 2) { thread in
            if thread == 0 {
                if builderAt.0.wait(timeout: .now() + 10) == .timedOut { timedOut.bump("setter") }
                x.value = 1
                setterDid.0.signal()
                if builderAt.1.wait(timeout: .now() + 10) == .timedOut { timedOut.bump("setter") }
                x.value = 2
                setterDid.1.signal()
                return
            }
            let derived = BuildProbe.$onBuilder.withValue(true) {
                x.map { value in
                    guard BuildProbe.onBuilder else { return value }
                    switch calls.withLock({ call -> Int in
                        call += 1
                        return call
                    }) {
                    case 1:
                        builderAt.0.signal()
                        if setterDid.0.wait(timeout: .now() + 10) == .timedOut { timedOut.bump("builder") }
                    case 2:
                        builderAt.1.signal()
                        if setterDid.1.wait(timeout: .now() + 10) == .timedOut { timedOut.bump("builder") }
                    default:
                        break
                    }
                    return value
                }
            }
            made.withLock { $0 = derived }
        }
        #expect(timedOut["setter"] == 0 && timedOut["builder"] == 0)
        #expect(calls.withLock { $0 } == 2)  // the start value and 1; 2 was left to the graph
        guard let derived = made.withLock({ $0 }) else {
            Issue.record("no map was built")
            return nil
        }
        return (x, derived)
    }

    @Test("A change arriving while the builder runs its buffered work reaches the value once sets stop")
    func changeLeftByTheBuilderIsRun() {
        guard let (x, derived) = mapWithWorkLeft() else { return }
        // Nothing sets `x` any more: what runs 2 is the graph's own job.
        #expect(eventually { derived.value == 2 })
        let log = GraphLock<[Int]>([])
        let token = derived.observeValuesNonisolated { value in log.withLock { $0.append(value) } }
        x.value = 3
        // `value` changes before its pass delivers: that pass may still run, and 3 then
        // follows it.
        #expect(eventually { log.withLock { $0 } == [2, 3] })
        token.cancel()
        #expect(x.observerCount == 2)  // the derived value and the input it observes
    }

    @Test("A join on an operator whose builder left work to the graph starts once that work ran")
    func joinOnAnOperatorWithWorkLeft() {
        // The join must be built before the graph's fallback job (5 ms later) brings the map to
        // 2 by itself; a thread held up longer than that tries again, up to 20 times.
        var tried = 0
        for _ in 0..<20 {
            guard let (x, mapped) = mapWithWorkLeft() else { return }
            guard mapped.value == 1 else { continue }
            tried += 1
            // The join's start runs behind the job that brings `mapped` to 2, so it never
            // pairs the map's 1 with the source's 2.
            let joined = mapped.combineLatest(x)
            let log = GraphLock<[String]>([])
            let token = joined.observeValuesNonisolated { pair in
                log.withLock { $0.append("\(pair.0),\(pair.1)") }
            }
            #expect(eventually { log.withLock { $0 }.last == "2,2" })
            #expect(log.withLock { $0 } == ["2,2"])
            token.cancel()
            break
        }
        #expect(tried == 1, "the map had caught up before the join was built, 20 times")
    }

    @Test("Maps built while a thread sets without pause: each build ends, then follows each change in order")
    func mapsBuiltUnderNonstopSets() {
        let x = ObservableValue(0)
        let building = GraphLock(true)
        let counts = Counters()
        race(threads: 2) { thread in
            if thread == 0 {
                let deadline = Date().addingTimeInterval(60)
                var next = 1
                while building.withLock({ $0 }) {
                    guard Date() < deadline else {
                        counts.bump("setter gave up")
                        return
                    }
                    x.value = next
                    next += 1
                }
                return
            }
            defer { building.withLock { $0 = false } }
            for _ in 0..<300 {
                let derived = x.map { $0 }
                let seen = GraphLock<[Int]>([])
                let token = derived.observeValuesNonisolated { value in seen.withLock { $0.append(value) } }
                let start = x.value
                guard eventually({ (derived.value ?? -1) > start }) else {
                    counts.bump("stale")
                    return
                }
                token.cancel()
                // The first value is what the observer started from; each change after it
                // arrives once, in order.
                let values = seen.withLock { $0 }
                counts.bump("built")
                if let end = values.last, !consecutive(values, endingAt: end) { counts.bump("out of order") }
            }
        }
        #expect(counts["setter gave up"] == 0)
        #expect(counts["stale"] == 0)
        #expect(counts["built"] == 300)
        #expect(counts["out of order"] == 0)
        #expect(x.observerCount == 0)
    }
}
