// Scenario 7: AsyncSequence delivery. One producer (this thread) pushes K Ints through an async
// sequence to one consuming task, which counts and sums them. Unit: nanoseconds per element =
// (time from the first push until the consumer has seen the end) / K.
//
// - kit EventChannel: `EventChannel<Int>.send`, consumed through `values(bufferingPolicy:
//   .unbounded)`.
// - kit ObservableValue: `ObservableValue<Int>.value = x`, the same way (the consumer also gets
//   the initial value first, so it sees K + 1 elements; the time is still divided by K).
// - AsyncStream by hand (the reference, the limit): `continuation.yield` into an unbounded
//   `AsyncStream<Int>`, with no observer machinery in between.
// - AsyncThrowingStream by hand: the same with the stream type the kit's `values()` returns, to
//   tell the kit's own cost from the stream type's.
// - OpenCombine: `PassthroughSubject<Int, Never>` consumed through OpenCombine 0.14.0's
//   `.values` (an `AsyncPublisher` that requests one element per `next()`). A subject drops what
//   it sends without demand, so a `buffer(size: Int.max, prefetch: .byRequest, whenFull:
//   .dropNewest)` sits in between: it never fills, so nothing is dropped. That buffer pops with
//   `Array.removeFirst`, so when the consumer falls behind, each element costs time in
//   proportion to the backlog: its number grows with K.
//
// The consumer starts (and subscribes) before the timer; the producer runs while it consumes,
// on two cores at once. No buffer drops anything: the consumer checks the count and the sum.

import Dispatch
import ObserverGraph
import OpenCombine

enum AsyncDelivery {
    static let family = ScenarioFamily(
        id: "async",
        summary: "values pushed through an AsyncSequence to one consuming task, ns per element",
        run: run)

    static let kitChannel = "kit EventChannel"
    static let kitValue = "kit ObservableValue"
    static let asyncStream = "AsyncStream by hand"
    static let asyncThrowingStream = "AsyncThrowingStream by hand"
    static let openCombine = "OpenCombine .values"

    /// Recorded with the OpenCombine row in the JSON (see the file's header).
    static let openCombineNote =
        "through buffer(size: Int.max); its pops shift the whole backlog, so the cost per element grows with K"

    static func scenario(_ k: Int) -> String { "async K=\(sizeLabel(k))" }

    static func run(plan: Plan, report: Report) {
        let k = plan.asyncElements
        progress(scenario(k))
        let base = opaque(1)

        // Each consumer makes its sequence inside the task (where OpenCombine's `.values`
        // subscribes) and hands it to `consume`, written out per contender so that the generic
        // call is made where the sequence's type is concrete.
        let contenders = [
            Contender(name: kitChannel) {
                let channel = EventChannel<Int>()
                return [
                    deliver(
                        k, base: base,
                        consumer: { await consume(channel.values(bufferingPolicy: .unbounded), into: $0) },
                        push: { channel.send($0) }, finish: { channel.finish() })
                ]
            },
            Contender(name: kitValue) {
                let value = ObservableValue(base)
                return [
                    deliver(
                        k, base: base, initial: base,
                        consumer: { await consume(value.values(bufferingPolicy: .unbounded), into: $0) },
                        push: { value.value = $0 }, finish: { value.finish() })
                ]
            },
            Contender(name: asyncStream) {
                let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
                return [
                    deliver(
                        k, base: base, consumer: { await consume(stream, into: $0) },
                        push: { continuation.yield($0) }, finish: { continuation.finish() })
                ]
            },
            Contender(name: asyncThrowingStream) {
                let (stream, continuation) = AsyncThrowingStream.makeStream(
                    of: Int.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
                return [
                    deliver(
                        k, base: base, consumer: { await consume(stream, into: $0) },
                        push: { continuation.yield($0) }, finish: { continuation.finish() })
                ]
            },
            Contender(name: openCombine) {
                let subject = PassthroughSubject<Int, Never>()
                let shared = UncheckedSendable(value: subject)
                return [
                    deliver(
                        k, base: base,
                        consumer: { tally in
                            let buffered = shared.value.buffer(
                                size: Int.max, prefetch: .byRequest, whenFull: .dropNewest)
                            await consume(buffered.values, into: tally)
                        },
                        push: { subject.send($0) }, finish: { subject.send(completion: .finished) })
                ]
            },
        ]
        let stats = roundRobin(contenders, samples: plan.asyncSamples, warmup: 1)
        for (contender, result) in zip(contenders, stats) {
            report.add(
                scenario: scenario(k), implementation: contender.name, stats: result[0], unit: "ns/element",
                reference: contender.name == asyncStream,
                note: contender.name == openCombine ? openCombineNote : nil)
        }
    }

    /// What the consuming task saw. `ready` is signalled once it has subscribed. The rest is
    /// written by the task before it signals `done`, and read only after `done.wait()`, so the
    /// semaphore orders the accesses.
    private final class Tally: @unchecked Sendable {
        let ready = DispatchSemaphore(value: 0)
        var count = 0
        var sum = 0
        var failure: (any Error)?
    }

    /// Starts a task that runs `consumer` (which consumes its sequence to the end), waits until
    /// it has subscribed, then times `push` of K values (`base`, `base + 1`, ...) and `finish`
    /// until the task has seen the end. Checks that it saw every element, in full: K of them,
    /// plus `initial` first when the source replays one. Returns ns per element.
    private static func deliver(
        _ k: Int, base: Int, initial: Int? = nil, consumer: @escaping @Sendable (Tally) async -> Void,
        push: (Int) -> Void, finish: () -> Void
    ) -> Double {
        let done = DispatchSemaphore(value: 0)
        let tally = Tally()
        Task.detached {
            await consumer(tally)
            done.signal()
        }
        tally.ready.wait()

        let start = monotonicNanoseconds()
        for i in 0..<k { push(base &+ i) }
        finish()
        done.wait()
        let elapsed = monotonicNanoseconds() - start

        let expectedCount = k + (initial == nil ? 0 : 1)
        let expectedSum = k &* base &+ k &* (k - 1) / 2 &+ (initial ?? 0)
        verify(tally.failure == nil, "async: the consumer failed: \(String(describing: tally.failure))")
        verify(
            tally.count == expectedCount && tally.sum == expectedSum,
            "async: consumed \(tally.count) elements summing to \(tally.sum), expected \(expectedCount) summing to \(expectedSum)"
        )
        blackHole(tally.sum)
        return Double(elapsed) / Double(k)
    }

    /// Subscribes (makes the iterator), signals `ready`, then counts and sums every element.
    private static func consume<Elements: AsyncSequence>(_ elements: Elements, into tally: Tally) async
    where Elements.Element == Int {
        var iterator = elements.makeAsyncIterator()
        tally.ready.signal()
        var count = 0
        var sum = 0
        do {
            while let element = try await iterator.next() {
                count &+= 1
                sum &+= element
            }
        } catch {
            tally.failure = error
        }
        tally.count = count
        tally.sum = sum
    }
}
