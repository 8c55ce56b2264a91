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

@Suite("Actors: an actor that keeps its tokens is not kept alive by them", .timeLimit(.minutes(3)))
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
            #expect(await eventually { counted.withLock { $0 } == 3 })
            switch end {
            case .none: break
            case .finished: channel.finish()
            case .cancelled: await keeper.stop()
            }
        }
        #expect(await eventually { deinits.withLock { $0 } == 1 })
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
            #expect(await eventually { deinits.withLock { $0 } == 1 }, "\(end)")
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
            #expect(await eventually { counted.withLock { $0 } == 1 })
        }
        #expect(await eventually { deinits.withLock { $0 } == 1 })
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
        #expect(await eventually { deinits.withLock { $0 } == 1 })
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

/// An actor whose values-only observer records what reaches it, and keeps its token.
actor ValueRecorder {
    private(set) var seen: [Int] = []
    private(set) var token: SubscriptionToken?

    func start(_ value: ObservableValue<Int>) {
        token = value.observeValues { self.seen.append($0) }
    }
}

@Suite("Actors: a value that goes away ends its observers on actors", .timeLimit(.minutes(3)))
struct ActorSourceEndTests {
    @Test("Main-actor observers: a values-only one ends at once, an event one gets .finished there")
    @MainActor
    func mainActorObserversOfAValueThatGoes() async {
        let deinits = GraphLock(0)
        var log: [String] = []
        let valuesToken: SubscriptionToken
        let eventsToken: SubscriptionToken
        weak var gone: ObservableValue<Int>?
        do {
            let value = ObservableValue(0)
            gone = value
            let release = DeinitCounter(deinits)
            valuesToken = value.observeValues { v in
                withExtendedLifetime(release) {}
                log.append("values \(v)")
            }
            eventsToken = value.observe { event in
                log.append("events " + (event.value.map { "\($0)" } ?? "\(event)"))
            }
            value.set(1)  // on the main actor: both closures are called before this returns
            #expect(log == ["values 0", "events 0", "values 1", "events 1"])
        }
        // The values-only observation has nothing left to run: it ended with its value, and its
        // closure was released right here.
        #expect(gone == nil)
        #expect(valuesToken.isCancelled)
        #expect(deinits.withLock { $0 } == 1)
        // The event closure is told, on the main actor, after what it had already received.
        #expect(await eventually { log.last == "events finished" })
        #expect(log == ["values 0", "events 0", "values 1", "events 1", "events finished"])
        #expect(eventsToken.isCancelled)
    }

    @Test("An actor's values-only observer with values still queued gets them all before it ends")
    @MainActor
    func queuedValuesComeBeforeTheEnd() async {
        let recorder = ValueRecorder()
        do {
            let value = ObservableValue(0)
            await recorder.start(value)
            // From the main actor: each value is queued for the recorder's actor, and the value
            // goes while they may still wait there.
            for next in 1...100 { value.value = next }
        }
        // The end comes after the queued values, on the recorder's actor.
        let deadline = ContinuousClock.now + .seconds(30)
        while await recorder.token?.isCancelled != true, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(await recorder.token?.isCancelled == true)
        #expect(await recorder.seen == Array(0...100))
    }
}
