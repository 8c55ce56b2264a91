import ObserverGraph
import Testing

/// An actor that observes a channel from itself and keeps the token, the way an actor-owned store
/// would. `capturing`: its closure uses the actor's state (and so captures the actor); otherwise
/// it only counts into a lock it shares with the test.
actor TokenKeeper {
    private(set) var seen = 0
    private var token: SubscriptionToken?
    let counted: GraphLock<Int>
    let deinits: GraphLock<Int>

    init(counted: GraphLock<Int>, deinits: GraphLock<Int>) {
        self.counted = counted
        self.deinits = deinits
    }

    func start(_ channel: EventChannel<Int>, capturing: Bool) {
        if capturing {
            token = channel.observeValues { self.seen += $0 }
        } else {
            let counted = counted
            token = channel.observeValues { value in counted.withLock { $0 += value } }
        }
    }

    /// Observes with a closure that does not capture the actor, and hands the token out.
    func observeLeavingToken(_ channel: EventChannel<Int>, release: DeinitCounter) -> SubscriptionToken {
        let counted = counted
        return channel.observeValues { value in
            withExtendedLifetime(release) {}
            counted.withLock { $0 += value }
        }
    }

    func stop() { token?.cancel() }

    deinit { deinits.withLock { $0 += 1 } }
}

/// Counts its own deinit: captured by a closure, it tells when the kit released that closure.
final class DeinitCounter: Sendable {
    let deinits: GraphLock<Int>
    init(_ deinits: GraphLock<Int>) { self.deinits = deinits }
    deinit { deinits.withLock { $0 += 1 } }
}

@Suite("Actors: an actor that keeps its tokens is not kept alive by them", .timeLimit(.minutes(1)))
struct ActorOwnershipTests {
    enum End: String, CaseIterable, CustomTestStringConvertible {
        case none, finished, cancelled
        var testDescription: String { rawValue }
    }

    @Test(
        "A closure that leaves the actor out: the actor goes with its last reference", arguments: End.allCases
    )
    func nonCapturingClosure(end: End) async {
        let counted = GraphLock(0)
        let deinits = GraphLock(0)
        let channel = EventChannel<Int>()
        do {
            let keeper = TokenKeeper(counted: counted, deinits: deinits)
            await keeper.start(channel, capturing: false)
            channel.send(3)
            #expect(await eventually(within: .seconds(10)) { counted.withLock { $0 } == 3 })
            switch end {
            case .none: break
            case .finished: channel.finish()
            case .cancelled: await keeper.stop()
            }
        }
        #expect(await eventually(within: .seconds(10)) { deinits.withLock { $0 } == 1 })
        // Its token went with it: the observation ended.
        channel.send(4)
        #expect(counted.withLock { $0 } == 3)
    }

    @Test("A closure that uses the actor's state holds the actor until the observation ends")
    func capturingClosure() async {
        for end in [End.finished, .cancelled] {
            let deinits = GraphLock(0)
            let channel = EventChannel<Int>()
            weak var weakKeeper: TokenKeeper?
            do {
                let keeper = TokenKeeper(counted: GraphLock(0), deinits: deinits)
                weakKeeper = keeper
                await keeper.start(channel, capturing: true)
                channel.send(5)
                #expect(await awaitValue(5) { await keeper.seen } == 5)
            }
            // The closure captures the actor, and the actor keeps the token: held (documented).
            try? await Task.sleep(for: .milliseconds(20))
            #expect(deinits.withLock { $0 } == 0)
            switch end {
            case .finished: channel.finish()
            case .cancelled: await weakKeeper?.stop()
            case .none: break
            }
            #expect(await eventually(within: .seconds(10)) { deinits.withLock { $0 } == 1 }, "\(end)")
        }
    }

    @Test("An observation whose actor is gone delivers nothing more and releases its closure")
    func actorGoneBeforeItsToken() async {
        let counted = GraphLock(0)
        let deinits = GraphLock(0)
        let closureReleases = GraphLock(0)
        let channel = EventChannel<Int>()
        var token: SubscriptionToken?
        do {
            let keeper = TokenKeeper(counted: counted, deinits: deinits)
            token = await keeper.observeLeavingToken(channel, release: DeinitCounter(closureReleases))
            channel.send(1)
            #expect(await eventually(within: .seconds(10)) { counted.withLock { $0 } == 1 })
        }
        #expect(await eventually(within: .seconds(10)) { deinits.withLock { $0 } == 1 })
        // Sent from a thread: the event would go to the actor's mailbox; the actor is gone, so
        // the observation ends instead, and its closure is released with no call.
        await onBackgroundThreads(1) { _ in channel.send(2) }
        #expect(counted.withLock { $0 } == 1)
        #expect(closureReleases.withLock { $0 } == 1)
        #expect(token?.isCancelled == true)
        #expect(channel.observerCount == 0)  // out of the source's list, as a cancelled one
        channel.send(3)
        #expect(counted.withLock { $0 } == 1)
        withExtendedLifetime(token) {}
    }

    @Test("While an observation lives, no actor is allocated where its dead actor was")
    func deadActorAddressNotReused() async {
        let deinits = GraphLock(0)
        let channel = EventChannel<Int>()
        var token: SubscriptionToken?
        var address: UInt = 0
        do {
            let keeper = TokenKeeper(counted: GraphLock(0), deinits: deinits)
            address = UInt(bitPattern: ObjectIdentifier(keeper))
            token = await keeper.observeLeavingToken(channel, release: DeinitCounter(GraphLock(0)))
        }
        #expect(await eventually(within: .seconds(10)) { deinits.withLock { $0 } == 1 })
        // An actor at that address, sending from itself, would pass for the dead one and run the
        // closure at once: the observation keeps the dead actor's memory, so none can be there.
        // (Without that, the allocator hands the freed block to one of the next few actors.)
        var fresh: [TokenKeeper] = []
        for _ in 0..<64 {
            fresh.append(TokenKeeper(counted: GraphLock(0), deinits: GraphLock(0)))
        }
        #expect(!fresh.contains { UInt(bitPattern: ObjectIdentifier($0)) == address })
        withExtendedLifetime(token) {}
    }
}
