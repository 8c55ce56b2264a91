import ObserverGraph
import ObserverGraphTesting
import Testing

private struct MarbleFailure: Error {}

/// Plays marble rows into channels on a virtual clock, applies an operator, and returns the
/// output as a marble row (`X` for a failure, `|` for completion). `cancelAt` cancels the
/// observation at that step (before the step's inputs), so nothing after it shows.
@MainActor
private func play(
    _ rows: [String], cancelAt: Int? = nil,
    _ apply: ([EventChannel<String>]) -> DerivedValue<String>
) throws -> String {
    let clock = VirtualClock()
    let channels = rows.map { _ in EventChannel<String>() }
    let output = apply(channels)
    let recorder = RecordingObserver<String>(clock: clock, name: "out")
    let token = output.observeNonisolated { recorder.record($0) }
    var length = 0
    if let cancelAt { clock.schedule(at: cancelAt) { token.cancel() } }
    for (row, channel) in zip(rows, channels) {
        let parsed = try MarbleDiagram(parsing: row).rows[0]
        length = max(length, parsed.length)
        for event in parsed.events {
            clock.schedule(at: event.step) {
                switch event.symbol {
                case .value(let text): channel.send(text)
                case .finished: channel.finish()
                case .failed: channel.fail(MarbleFailure())
                case .subscribed, .unsubscribed: break
                }
            }
        }
    }
    clock.schedule(at: max(0, length - 1)) {}
    clock.run()
    withExtendedLifetime(token) {}
    return MarbleDiagram(recorder.marbleRow(label: "")).text
}

@Suite("Operators as marble diagrams: values, completion, failure, cancellation")
@MainActor
struct OperatorMarbleTests {
    @Test("map")
    func map() throws {
        #expect(try play(["-a-b-c-|->"]) { $0[0].map { $0.uppercased() } } == "-A-B-C-|->")
        #expect(try play(["-a-b-X->"]) { $0[0].map { $0.uppercased() } } == "-A-B-X->")
        #expect(try play(["-a-b-c-d->"], cancelAt: 4) { $0[0].map { $0.uppercased() } } == "-A-B----->")
    }

    @Test("compactMap")
    func compactMap() throws {
        let digits: ([EventChannel<String>]) -> DerivedValue<String> = { channels in
            channels[0].compactMap { Int($0).map { "\($0 * 2)" } }
        }
        #expect(try play(["-1-a-3-|->"], digits) == "-2---6-|->")
        #expect(try play(["-1-a-X->"], digits) == "-2---X->")
        #expect(try play(["-1-2-3-4->"], cancelAt: 4, digits) == "-2-4----->")
    }

    @Test("filter")
    func filter() throws {
        let vowels: ([EventChannel<String>]) -> DerivedValue<String> = { channels in
            channels[0].filter { "aeiou".contains($0) }
        }
        #expect(try play(["-a-b-e-|->"], vowels) == "-a---e-|->")
        #expect(try play(["-a-b-X->"], vowels) == "-a---X->")
        #expect(try play(["-a-e-i-o->"], cancelAt: 4, vowels) == "-a-e----->")
    }

    @Test("removeDuplicates")
    func removeDuplicates() throws {
        let distinct: ([EventChannel<String>]) -> DerivedValue<String> = { $0[0].removeDuplicates() }
        #expect(try play(["-a-a-b-b-a-|->"], distinct) == "-a---b---a-|->")
        #expect(try play(["-a-a-X->"], distinct) == "-a---X->")
        #expect(try play(["-a-b-c-d->"], cancelAt: 4, distinct) == "-a-b----->")
    }

    @Test("scan")
    func scan() throws {
        let joined: ([EventChannel<String>]) -> DerivedValue<String> = { $0[0].scan("") { $0 + $1 } }
        #expect(try play(["-a-b-c-|->"], joined) == "-a-[ab]-[abc]-|->")
        #expect(try play(["-a-b-X->"], joined) == "-a-[ab]-X->")
        #expect(try play(["-a-b-c-d->"], cancelAt: 4, joined) == "-a-[ab]----->")
    }

    @Test("prepend")
    func prepend() throws {
        let started: ([EventChannel<String>]) -> DerivedValue<String> = { $0[0].prepend("s") }
        #expect(try play(["---a-b-|->"], started) == "s--a-b-|->")
        #expect(try play(["---a-X->"], started) == "s--a-X->")
        #expect(try play(["-a-b-c->"], cancelAt: 4, started) == "sa-b--->")
    }

    @Test("combineLatest")
    func combineLatest() throws {
        let both: ([EventChannel<String>]) -> DerivedValue<String> = { channels in
            channels[0].combineLatest(channels[1]).map { $0 + $1 }
        }
        #expect(try play(["-a---b---|->", "---1---2---|->"], both) == "---[a1]-[b1]-[b2]---|->")
        #expect(try play(["-a---b-->", "---1-X->"], both) == "---[a1]-([b1]X)->")
        #expect(try play(["-a-b-c-->", "-1------>"], cancelAt: 4, both) == "-[a1]-[b1]---->")
    }

    @Test("merge")
    func merge() throws {
        let merged: ([EventChannel<String>]) -> DerivedValue<String> = { $0[0].merge($0[1]) }
        #expect(try play(["-a---b-|->", "--1-2---|->"], merged) == "-a1-2b--|->")
        #expect(try play(["-a---b-->", "--1-X->"], merged) == "-a1-X->")
        #expect(try play(["-a-b-c-->", "--1-2-3->"], cancelAt: 4, merged) == "-a1b---->")
    }

    @Test("flatMapLatest")
    func flatMapLatest() throws {
        let follow: ([EventChannel<String>]) -> DerivedValue<String> = { channels in
            let inners = Array(channels.dropFirst())
            return channels[0].flatMapLatest { $0 == "a" ? inners[0] : inners[1] }
        }
        // "b" and "y" share step 5: the switch comes first, so "y" passes.
        #expect(try play(["-a---b---|->", "--1-2-3-|->", "---x-y-z---|->"], follow) == "--1-2y-z---|->")
        #expect(try play(["-a---b-->", "--1-2-3->", "---x-y-X->"], follow) == "--1-2y-X->")
        #expect(try play(["-a---b-->", "--1-2-3->", "---x-y-z->"], cancelAt: 6, follow) == "--1-2y--->")
    }
}
