import Testing

// White-box only for the identity counter (its 2^29 bound cannot be reached in a test's time)
// and the size of a node's state; everything else goes through the public API.
@testable import ObserverGraph

@Suite("Core: registry storage under long random histories")
struct RegistryStorageTests {
    /// One member of the pool: a plain class observer, a tracking observer or a struct observer.
    enum Member {
        case plain(Watcher)
        case tracking(Tracker)
        case value(KeyedObserver)

        var id: ObserverID {
            switch self {
            case .plain(let watcher): watcher.observerID
            case .tracking(let tracker): tracker.observerID
            case .value(let value): value.observerID
            }
        }

        func add(to subject: Subject) -> Bool {
            switch self {
            case .plain(let watcher): subject.addObserver(watcher) != nil
            case .tracking(let tracker): subject.addObserver(tracker) != nil
            case .value(let value): subject.addObserver(value) != nil
            }
        }

        func remove(from subject: Subject) -> Bool {
            switch self {
            case .plain(let watcher): subject.removeObserver(watcher) != nil
            case .tracking(let tracker): subject.removeObserver(tracker) != nil
            case .value(let value): subject.removeObserver(value) != nil
            }
        }

        func isIn(_ subject: Subject) -> Bool {
            switch self {
            case .plain(let watcher): subject.hasObserver(watcher)
            case .tracking(let tracker): subject.hasObserver(tracker) && tracker.isSubscribed(to: subject)
            case .value(let value): subject.hasObserver(value)
            }
        }
    }

    static func fresh(_ kind: Int, _ serial: Int) -> Member {
        switch kind {
        case 0: .tracking(Tracker("T\(serial)"))
        case 1: .value(KeyedObserver(observerID: ObserverID(), payload: nil))
        default: .plain(Watcher("W\(serial)"))
        }
    }

    /// Grows the registry well past the size where it starts indexing, shrinks it back down
    /// (compaction, back to a scan) and again, while observers die without unsubscribing and new
    /// ones take their addresses. After every few steps the observer list, its order, the
    /// queries, a broadcast and the audit must all agree with a plain model.
    @Test("Random add, remove and deallocation across index growth and compaction", arguments: [1, 2, 3])
    func randomHistory(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let subject = Subject("S")
        var pool = (0..<400).map { Self.fresh($0 % 10, $0) }
        var serial = pool.count
        var model: [ObserverID] = []  // registration order
        for step in 0..<8_001 {
            // Checked before this step's member is taken from the pool: a member dropped from
            // the pool in the previous step is deallocated by now.
            if step % 40 == 0 {
                check(subject, pool: pool, model: model, context: "seed \(seed) step \(step)")
            }
            let growing = (step / 1_000) % 2 == 0
            let i = Int.random(in: 0..<pool.count, using: &random)
            let member = pool[i]
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < (growing ? 60 : 25) {
                let added = member.add(to: subject)
                #expect(added == !model.contains(member.id), "seed \(seed) step \(step): add")
                if added { model.append(member.id) }
            } else if roll < 90 {
                let removed = member.remove(from: subject)
                #expect(removed == model.contains(member.id), "seed \(seed) step \(step): remove")
                model.removeAll { $0 == member.id }
            } else {
                // The pool's reference goes away: a class observer is deallocated without
                // unsubscribing; a struct observer stays subscribed (the registry owns a copy).
                if case .value = member {} else { model.removeAll { $0 == member.id } }
                pool[i] = Self.fresh(i % 10, serial)
                serial += 1
            }
        }
    }

    /// Registries that go from one entry to none and back at nearly every step: a removal leaves
    /// the sole slot vacated in place and the next subscribe refills it. Two observables and three
    /// members, with observers and observables deallocated between steps; after every step each
    /// observer list, each tracker's subscriptions, the queries, broadcasts and the audit must
    /// agree with a plain model.
    @Test("Registries emptied and refilled one entry at a time stay consistent", arguments: [4, 5, 6])
    func soleEntryHistory(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var subjects = [Subject("S0"), Subject("S1")]
        var pool = (0..<3).map { Self.fresh($0, $0) }
        var serial = pool.count
        var model: [[ObserverID]] = [[], []]
        for step in 0..<3_000 {
            let context = "seed \(seed) step \(step)"
            let s = Int.random(in: 0..<2, using: &random)
            let i = Int.random(in: 0..<pool.count, using: &random)
            let roll = Int.random(in: 0..<100, using: &random)
            // In its own scope, so that a member dropped from the pool is deallocated before the checks.
            do {
                let member = pool[i]
                if roll < 45 {
                    let added = member.add(to: subjects[s])
                    #expect(added == !model[s].contains(member.id), "\(context): add")
                    if added { model[s].append(member.id) }
                } else if roll < 85 {
                    let removed = member.remove(from: subjects[s])
                    #expect(removed == model[s].contains(member.id), "\(context): remove")
                    model[s].removeAll { $0 == member.id }
                } else if roll < 95 {
                    // Deallocated without unsubscribing (a struct observer stays: the registry owns a copy).
                    if case .value = member {} else { model = model.map { $0.filter { $0 != member.id } } }
                    pool[i] = Self.fresh(Int.random(in: 0..<3, using: &random), serial)
                    serial += 1
                } else {
                    // The observable is deallocated: its trackers' lists drop it.
                    subjects[s] = Subject("S\(serial)")
                    serial += 1
                    model[s] = []
                }
            }
            for (subject, observers) in zip(subjects, model) {
                #expect(subject.observers.map(\.observerID) == observers, "\(context): observer order")
                #expect(subject.broadcast(as: (any GraphObserver).self) { _ in } == observers.count)
            }
            for member in pool {
                let expected = (0..<2).filter { model[$0].contains(member.id) }
                #expect((0..<2).filter { member.isIn(subjects[$0]) } == expected, "\(context): query")
                if case .tracking(let tracker) = member {
                    #expect(tracker.subscriptionCount == expected.count, "\(context): subscriptions")
                }
            }
            var nodes = subjects.map(\.graphNode)
            for member in pool {
                if case .tracking(let tracker) = member { nodes.append(tracker.graphNode) }
            }
            #expect(GraphNode.consistencyViolations(among: nodes).isEmpty, "\(context): audit")
        }
    }

    private func check(_ subject: Subject, pool: [Member], model: [ObserverID], context: String) {
        // Struct observers dropped from the pool are still subscribed: the model keeps them.
        #expect(subject.observers.map(\.observerID) == model, "\(context): observer order")
        #expect(subject.observerCount == model.count, "\(context): count")
        let modelSet = Set(model)
        for member in pool {
            #expect(member.isIn(subject) == modelSet.contains(member.id), "\(context): query")
        }
        let delivered = subject.broadcast(as: (any GraphObserver).self) { _ in }
        #expect(delivered == model.count, "\(context): broadcast")
        var nodes = [subject.graphNode]
        for member in pool {
            if case .tracking(let tracker) = member { nodes.append(tracker.graphNode) }
        }
        #expect(GraphNode.consistencyViolations(among: nodes).isEmpty, "\(context): audit")
    }

    @Test("Queries find a tracking subclass of a plain observer class, whatever the static type")
    func queriesSeeTrackingSubclass() {
        let subject = Subject("S")
        let base = PlainBase()
        let tracking = TrackingBelow()
        let asBase: PlainBase = tracking
        withExtendedLifetime((base, tracking)) {
            #expect(!subject.hasObserver(base) && !subject.hasObserver(asBase))
            #expect(subject.addObserver(asBase) != nil)  // filed under its node, as a tracker
            #expect(subject.addObserver(base) != nil)
            #expect(subject.hasObserver(asBase) && subject.hasObserver(tracking) && subject.hasObserver(base))
            #expect(asBase.isSubscribed(to: subject) && tracking.subscriptionCount == 1)
            #expect(subject.removeObserver(asBase) != nil)
            #expect(
                !subject.hasObserver(asBase) && !subject.hasObserver(tracking) && subject.hasObserver(base))
            #expect(tracking.subscriptionCount == 0)
        }
    }

    @Test("A tracking subclass is found again after its observable was emptied and compacted")
    func trackingSubclassAfterEmptyingAndCompaction() {
        // Queries skip the class check while an observable has had no tracking observer since it
        // was last empty; emptying and compaction must not lose track of one added later.
        let subject = Subject("S")
        let tracking = TrackingBelow()
        let asBase: PlainBase = tracking
        let plain = (0..<40).map { _ in PlainBase() }
        withExtendedLifetime((plain, tracking)) {
            #expect(subject.addObserver(asBase) != nil)
            #expect(subject.removeObserver(asBase) != nil)  // empty now
            #expect(!subject.hasObserver(asBase))
            for observer in plain { subject.addObserver(observer) }
            #expect(!subject.hasObserver(asBase))
            #expect(subject.addObserver(asBase) != nil)
            #expect(subject.hasObserver(asBase))
            // Half the plain ones leave: the list is compacted with the tracking entry kept.
            for observer in plain.prefix(30) { subject.removeObserver(observer) }
            #expect(subject.hasObserver(asBase) && asBase.isSubscribed(to: subject))
            #expect(subject.observerCount == 11)
            #expect(subject.removeObserver(asBase) != nil)
            #expect(!subject.hasObserver(asBase) && subject.observerCount == 10)
        }
    }

    /// The orders in which `removalPatterns` takes observers out: oldest first, newest first,
    /// every other one (more runs of live slots than a compaction tracks), one block from the
    /// middle, and a few scattered runs.
    static let removalPatterns: [(name: String, order: @Sendable (Int) -> [Int])] = [
        ("oldest first", { Array(0..<$0) }),
        ("newest first", { Array((0..<$0).reversed()) }),
        ("every other", { n in Array(stride(from: 0, to: n, by: 2)) + Array(stride(from: 1, to: n, by: 2)) }),
        ("middle block", { n in Array((n / 4)..<n) + Array(0..<(n / 4)) }),
        ("runs of seven", { n in (0..<n).sorted { ($0 / 7 % 3, $0) < ($1 / 7 % 3, $1) } }),
        // Holes on both sides of one run of live entries.
        ("both ends", { n in (0..<n).map { $0 % 2 == 0 ? $0 / 2 : n - 1 - $0 / 2 } }),
    ]

    /// The removal patterns on a registry of tracking, struct and plain observers: a
    /// compaction keeps each entry's kind (a tracking entry's edge has a second side, in its
    /// tracker's list), so every query and removal still finds it.
    @Test("Compaction keeps lookups of tracking, struct and plain observers, whatever the removal pattern")
    func mixedRemovalPatterns() {
        let count = 200
        for (name, order) in Self.removalPatterns {
            let subject = Subject("S")
            let members = (0..<count).map { Self.fresh($0 % 3, $0) }
            for member in members { #expect(member.add(to: subject)) }
            let nodes =
                [subject.graphNode]
                + members.compactMap { if case .tracking(let t) = $0 { t.graphNode } else { nil } }
            var present = Array(repeating: true, count: count)
            for (step, index) in order(count).enumerated() {
                #expect(members[index].remove(from: subject), "\(name) step \(step): remove \(index)")
                present[index] = false
                guard step % 10 == 0 else { continue }
                let found = members.indices.filter { members[$0].isIn(subject) }
                #expect(found == members.indices.filter { present[$0] }, "\(name) step \(step): lookup")
                #expect(GraphNode.consistencyViolations(among: nodes).isEmpty, "\(name) step \(step)")
            }
            #expect(subject.observers.isEmpty, "\(name)")
        }
    }

    /// Removes observers in each pattern, checking after every removal of a batch that the order,
    /// the queries and a broadcast agree with a model: each compaction (its moves of slots, and
    /// the index pointed at the new positions or rebuilt) must keep every entry findable.
    @Test("Compaction keeps order and lookups, whatever the removal pattern", arguments: [64, 300, 5_000])
    func removalPatterns(count: Int) {
        for (name, order) in Self.removalPatterns {
            let subject = Subject("S")
            let observers = (0..<count).map { Watcher("W\($0)") }
            for observer in observers { subject.addObserver(observer) }
            var present = Array(repeating: true, count: count)
            let removals = order(count)
            let checkEvery = max(1, count / 50)
            for (step, index) in removals.enumerated() {
                let context = "\(name) N=\(count) step \(step)"
                #expect(subject.removeObserver(observers[index]) != nil, "\(context): remove \(index)")
                present[index] = false
                guard step % checkEvery == 0 || step == removals.count - 1 else { continue }
                let expected = observers.indices.filter { present[$0] }
                let listed = subject.observers.map(\.observerID)
                #expect(listed == expected.map { observers[$0].observerID }, "\(context): order")
                let found = observers.indices.filter { subject.hasObserver(observers[$0]) }
                #expect(found == expected, "\(context): lookup")
                var reached = 0
                subject.broadcast(as: Watcher.self) { _ in reached += 1 }
                #expect(reached == expected.count, "\(context): broadcast")
            }
            // Everyone can join again, at the end of the order.
            for observer in observers.prefix(10) { #expect(subject.addObserver(observer) != nil) }
            #expect(subject.observers.map(\.observerID) == observers.prefix(10).map(\.observerID))
        }
    }

    /// A due sweep samples a large registry first and loads every entry only where the sample
    /// finds enough of them dead (see `GraphNode._sweepDeadObservers`). Whatever share of a
    /// growing registry's observers are deallocated without leaving, the dead entries must stay
    /// within three times the live ones (64 while there are few), after every subscribe.
    @Test(
        "Dead entries stay bounded in a growing registry, whatever share of its observers die",
        arguments: [0, 5, 20, 50, 80, 95, 100])
    func deadEntriesBounded(percentDying: Int) {
        var random = SeededGenerator(seed: UInt64(percentDying) &+ 11)
        let subject = Subject("S")
        var kept: [Watcher] = []
        // An unowned reference keeps a deallocated object's memory, so no new observer takes
        // its address (a subscribe at the address of a dead entry replaces it, which would
        // hide a sweep that does not come).
        var graves: [Grave] = []
        var worst = (dead: 0, live: 0)
        for serial in 0..<8_000 {
            do {
                let observer = Watcher("W\(serial)")
                subject.addObserver(observer)
                if Int.random(in: 0..<100, using: &random) >= percentDying {
                    kept.append(observer)
                } else {
                    graves.append(Grave(watcher: observer))
                }
            }  // deallocated here unless kept, still subscribed
            let dead = subject.graphNode._state.withLock { $0.observers.filedCount } - kept.count
            if dead > max(64, 3 * kept.count) {
                worst = (dead, kept.count)
                break
            }
        }
        #expect(worst.dead == 0, "\(worst.dead) dead entries next to \(worst.live) live ones")
        // A broadcast drops every dead entry it meets: what is left is the kept observers, in order.
        subject.broadcast(as: Watcher.self) { _ in }
        #expect(subject.graphNode._state.withLock { $0.observers.filedCount } == kept.count)
        #expect(subject.observers.map(\.observerID) == kept.map(\.observerID))
        withExtendedLifetime(graves) {}
    }

    /// A due sweep that samples and finds no dead entry schedules the next one at twice the
    /// slots; one whose sample finds many dead (here half) loads every entry and drops them all.
    @Test("A sweep's sample: the next sweep at twice the slots when none died, a full pass when half did")
    func sweepSampleDecisions() {
        let subject = Subject("S")
        let kept = (0..<2_000).map { Watcher("K\($0)") }
        for watcher in kept { subject.addObserver(watcher) }
        // Sweeps came due at 64 slots (a full pass, the registry being small), then at 256,
        // 512 and 1,024, each sampled and finding nothing dead: the next is due at 2,048.
        let (slots, mark) = subject.graphNode._state.withLock {
            ($0.observers.slots.count, $0.observers.sweepMark)
        }
        #expect(slots == 2_000 && mark == 2_048, "slots \(slots), next sweep at \(mark)")
        // Observers that die while subscribed, their memory kept so that no new one takes a dead
        // one's address. At 2,048 slots the sample finds under an eighth dead (48 of 2,048) and
        // the next sweep is due at 4,096, where half the entries are dead: a full pass.
        var graves: [Grave] = []
        for serial in 0..<2_200 {
            let observer = Watcher("D\(serial)")
            subject.addObserver(observer)
            graves.append(Grave(watcher: observer))
        }
        // Left: the kept observers, and the dying ones subscribed after the full pass (the one
        // whose subscribe ran it was alive then).
        let filed = subject.graphNode._state.withLock { $0.observers.filedCount }
        #expect(filed == 2_000 + 2_200 - (4_096 - 2_000) + 1, "filed \(filed)")
        withExtendedLifetime(kept) {}
        withExtendedLifetime(graves) {}
    }

    /// Observers that die while subscribed, each new one at its predecessor's address (as the
    /// allocator hands it back): each subscribe replaces a dead entry, vacating its slot. Those
    /// holes must be compacted like a removal's, or the slots grow at every subscribe and a
    /// sweep, finding the new observer alive, comes due at every one (found by a review).
    @Test("Holes left by subscribes that replace dead entries are compacted")
    func holesFromReplacedDeadEntries() {
        let subject = Subject("S")
        let kept = (0..<20).map { Watcher("K\($0)") }
        for watcher in kept { subject.addObserver(watcher) }
        for serial in 0..<5_000 {
            let observer = Watcher("W\(serial)")
            subject.addObserver(observer)
        }  // each deallocated while subscribed
        let (slots, mark) = subject.graphNode._state.withLock {
            ($0.observers.slots.count, $0.observers.sweepMark)
        }
        #expect(slots < 200, "\(slots) slots for \(kept.count) live observers and dead ones")
        #expect(mark > slots, "a sweep due at \(mark) slots, with \(slots) already")
        subject.broadcast(as: Watcher.self) { _ in }
        #expect(subject.observers.map(\.observerID) == kept.map(\.observerID))
    }

    /// An observer's memory, kept after its deinit.
    struct Grave {
        unowned let watcher: Watcher
    }

    @Test("A registry that shrank hands its slot memory back")
    func shrinkingHandsMemoryBack() {
        // White-box: the capacity of the slot buffer is not visible through the API. Compaction
        // used to ask for a smaller buffer with `ContiguousArray(slots)`, which returns the same
        // buffer, so a registry that once held 4,096 observers kept room for all of them.
        let subject = Subject("S")
        let observers = (0..<4_096).map { Watcher("W\($0)") }
        for observer in observers { subject.addObserver(observer) }
        for observer in observers.dropLast(100) { subject.removeObserver(observer) }
        let (count, capacity) = subject.graphNode._state.withLock {
            ($0.observers.slots.count, $0.observers.slots.capacity)
        }
        #expect(subject.observerCount == 100)
        #expect(count <= 200, "slots \(count)")
        #expect(capacity <= 4 * max(count, 100), "capacity \(capacity) for \(count) slots")
        #expect(subject.observers.map(\.observerID) == observers.suffix(100).map(\.observerID))
    }

    @Test("A class observer with its own observerID is found under it, as every operation files it")
    func classWithOwnIdentity() {
        let subject = Subject("S")
        let shared = ObserverID()
        let first = OwnIdentity(shared)
        let second = OwnIdentity(shared)
        let other = OwnIdentity(ObserverID())
        withExtendedLifetime((first, second, other)) {
            #expect(subject.addObserver(first) != nil)
            #expect(subject.hasObserver(first) && subject.hasObserver(second) && !subject.hasObserver(other))
            #expect(subject.addObserver(second) == nil)  // one identity: already subscribed
            #expect(subject.removeObserver(second) != nil)
            #expect(!subject.hasObserver(first) && subject.observerCount == 0)
        }
    }

    @Test("Generated identities do not repeat past 2^29 (where a 32-bit counter shifted by 3 wraps)")
    func generatedIdentitiesStayUnique() {
        let first = ObserverID()
        // Jump the process-wide counter to just below 2^29 and 2^32 (which a 32-bit identity
        // reaches after 2^29 ids); new ids must still differ from every earlier one.
        var seen: Set<ObserverID> = [first]
        for start: UInt64 in [(1 << 29) - 2, (1 << 32) - 2] {
            _ObserverIDSource.counter.withLock { $0 = max($0, start) }
            for _ in 0..<4 {
                let id = ObserverID()
                #expect(seen.insert(id).inserted, "identity \(id) repeated")
            }
        }
        #expect(ObserverID() != first)
    }

    @Test("A node's lock and state fit in the first 128 bytes of its storage (two cache lines)")
    func nodeStateFitsTwoCacheLines() {
        // An edge change on a node that is not in the cache (a tracking observer's, typically)
        // then costs one fetch of its state; at 240 bytes it cost two, and the tracking churn
        // benchmark at 100k observers showed it (1.5x plain instead of 1.1x). On Linux the node
        // itself stores its lock word and state: an object header (16 bytes) and the word (8
        // with padding) before the state. On Darwin the node's `GraphLock` storage holds them:
        // the state follows the header and the 4-byte lock follows the state.
        // A tracking observer's list takes two words inline (its lone subscription and a
        // reference to the registry it moves to at its second), so the state is 80 bytes, and
        // on Linux the whole node is 112 (a 128-byte heap block).
        #expect(MemoryLayout<_Registry>.size == 40)
        #expect(MemoryLayout<_SubscriptionList>.size == 16)
        #expect(MemoryLayout<_NodeState>.size <= 80)
        #expect(MemoryLayout<_CallbackQueue>.size == 8)
    }

    /// Removing the last entry and adding another, over and over (a tracker churning the second
    /// of its two subscriptions, or an observable's newest observer coming and going), used to
    /// append a slot each time until 16 holes were compacted away; now the new entry takes the
    /// vacant last slot, which keeps registration order. Short (scanned) registries only, from
    /// two entries to the most a registry scans (7 and the one added); an indexed one appends.
    /// Each refill moves the layout's refill count (readers holding that position skip it), not
    /// its compaction count (readers still drop the dead entries they found before it).
    @Test(
        "A vacant last slot is refilled in place: order kept, the slot array does not grow",
        arguments: [2, 7]
    )
    func lastSlotRefill(count: Int) {
        let objects = (0..<count + 101).map { Watcher("W\($0)") }
        let keys = objects.map { _ in ObserverID() }
        var registry = _Registry()
        /// Inserts entry `i` and returns whether it was new.
        func insert(_ i: Int, object: AnyObject? = nil) -> Bool {
            let outcome = registry.insert(key: keys[i], object: object ?? objects[i], flags: 0, box: nil)
            guard case .inserted = outcome else { return false }
            return true
        }
        var expected = Array(keys.prefix(count))
        for i in 0..<count { #expect(insert(i)) }
        let capacity = registry.slots.capacity
        for i in count..<count + 100 {
            let layout = registry.layout
            #expect(registry.remove(key: expected.removeLast()) != nil)
            #expect(registry.layout == layout)  // a removal moves no entry
            #expect(insert(i))
            expected.append(keys[i])
            // The refill count moves: a reader that found the last occupant dead skips the slot.
            #expect(registry.layout == layout &+ 1)
            #expect(registry.locate(keys[i])?.position == count - 1)
        }
        #expect(registry.slots.count == count && registry.slots.capacity == capacity)
        #expect(registry.slots.map(\.key) == expected)
        #expect(registry.violations() == [])
        // The last entry's object deallocated: an entry with its key takes the same slot.
        let reused = count + 100
        do {
            let transient = Watcher("transient")
            #expect(insert(reused, object: transient))
        }
        let layoutBeforeReuse = registry.layout
        #expect(insert(reused))
        expected.append(keys[reused])
        #expect(registry.slots.count == count + 1 && registry.slots.map(\.key) == expected)
        // A reader may hold the dead entry's position and bits, which the new one repeats.
        #expect(registry.layout != layoutBeforeReuse)
        // Two holes, one of them last: the last is refilled, the other stays a hole.
        #expect(registry.remove(key: expected.removeFirst()) != nil)
        #expect(registry.remove(key: expected.removeLast()) != nil)
        #expect(insert(count - 1))
        expected.append(keys[count - 1])
        #expect(registry.slots.count == count + 1 && registry.vacant == 1)
        #expect(registry.slots.map(\.key).filter { $0._raw != 0 } == expected)
        #expect(registry.violations() == [])
        // A hole before a live last slot stays one: a new entry goes after the last.
        #expect(insert(0))
        expected.append(keys[0])
        #expect(registry.slots.count == count + 2)
        #expect(registry.slots.map(\.key).filter { $0._raw != 0 } == expected)
        #expect(registry.violations() == [])
        // The objects are alive until here (an optimized build would release them after their
        // last use otherwise, and their weak references would read as gone).
        withExtendedLifetime(objects) {
            #expect(expected.allSatisfy { registry.liveObject(for: $0) != nil })
        }
        // Emptied, the registry's positions are gone: the compaction count (the layout's high
        // half, whatever the width of `UInt`) moves by one.
        let beforeEmptying = registry.layout
        for key in expected { _ = registry.remove(key: key) }
        #expect(registry.slots.isEmpty)
        #expect(_Registry.positionsMoved > 1)
        #expect(registry.layout / _Registry.positionsMoved == beforeEmptying / _Registry.positionsMoved + 1)
    }

    /// A broadcast drops the entries it found dead when it ends, unless the registry's layout
    /// moved meanwhile. An observer that leaves and puts a fresh one in its place during each
    /// broadcast refills the last slot each time; that must not keep a deallocated observer
    /// filed in an earlier slot from being dropped (a first version of the refill moved the
    /// layout on every refill, and the dead entry stayed for good).
    @Test("A deallocated observer is dropped by a broadcast in which the last observer is replaced")
    func deadDroppedDespiteLastSlotChurn() {
        let subject = Subject("S")
        do {
            let doomed = Watcher("D")
            subject.addObserver(doomed)
        }  // deallocated without leaving: a dead entry in the first slot
        let holder = ReplacerHolder()
        let first = SelfReplacer(subject, holder: holder)
        holder.current = first
        subject.addObserver(first)  // the last slot
        for round in 0..<5 {
            subject.broadcast(as: (any Pinged).self) { $0.ping("round \(round)") }
        }
        let filed = subject.graphNode._state.withLock { $0.observers.filedCount }
        #expect(filed == 1, "entries filed, live and dead")
        #expect(GraphSnapshot(observables: [subject]).danglingEntries.isEmpty)
        #expect(holder.replacements == 5)
        #expect(subject.observers.count == 1 && subject.hasObserver(holder.current!))
    }

    @Test("A tracker's list: the lone entry, the move to a registry, duplicates, removal, copies")
    func subscriptionListTransitions() {
        let (a, b, c) = (ObserverID(_raw: 0x1000), ObserverID(_raw: 0x2000), ObserverID(_raw: 0x3000))
        var list = _SubscriptionList()
        /// Inserts each key in turn and returns whether each was new.
        func insert(_ keys: ObserverID..., into list: inout _SubscriptionList) -> [Bool] {
            keys.map { list.insert($0) }
        }
        #expect(insert(a, a, into: &list) == [true, false])  // a duplicate of the lone entry
        #expect(list.sole == a._raw && list.more == nil)
        #expect(list.locate(a)?.position == -1)
        #expect(list.entryKeys == [a._raw])
        // The lone entry moves first: order kept; then duplicates in the registry.
        #expect(insert(b, a, b, into: &list) == [true, false, false])
        #expect(list.sole == 0 && list.more != nil)
        #expect(list.keys == [a, b])
        #expect(list.violations() == [])
        // A copy read after unlocking gets a registry of its own.
        var copy = list
        copy.detachExtras()
        #expect(insert(c, into: &list) == [true])
        list.drop(key: a)
        #expect(list.keys == [b, c])
        #expect(copy.keys == [a, b])
        #expect(copy.violations() == [] && list.violations() == [])
        // Emptied, the list stays in its registry, in order.
        if let place = list.locate(b) { list.drop(at: place) }
        list.drop(key: c)
        #expect(list.keys == [] && !list.contains(b))
        #expect(insert(c, a, into: &list) == [true, true])
        #expect(list.keys == [c, a] && list.sole == 0)
        // The lone entry dropped by its place, then by its key.
        var lone = _SubscriptionList()
        #expect(insert(b, into: &lone) == [true])
        if let place = lone.locate(b) { lone.drop(at: place) }
        #expect(lone.entryKeys == [] && lone.locate(b) == nil)
        #expect(insert(c, into: &lone) == [true])
        lone.drop(key: c)
        lone.drop(key: c)
        #expect(lone.entryKeys == [] && lone.violations() == [] && lone.more == nil)
    }
}

/// An observer that, pinged, leaves its observable and subscribes a fresh one of its kind.
final class SelfReplacer: GraphObserver, Pinged, @unchecked Sendable {
    let subject: Subject
    /// Unowned: the holder holds the current replacer (a strong reference back was a cycle,
    /// which the address sanitizer reported as a leak of the test's subject).
    unowned let holder: ReplacerHolder

    init(_ subject: Subject, holder: ReplacerHolder) {
        self.subject = subject
        self.holder = holder
    }

    func ping(_ tag: String) {
        subject.removeObserver(self)
        let next = SelfReplacer(subject, holder: holder)
        subject.addObserver(next)
        holder.current = next
        holder.replacements += 1
    }
}

/// Keeps the current `SelfReplacer` alive (the subject holds its observers weakly).
final class ReplacerHolder: @unchecked Sendable {
    var current: SelfReplacer?
    var replacements = 0
}

/// A plain observer class...
class PlainBase: GraphObserver {}

/// ...with a subclass that adopts tracking below it (its protocol hook is the base's `nil`).
final class TrackingBelow: PlainBase, GraphTrackingObserver {
    let graphNode = GraphNode()
}

/// A class observer that brings its own identity instead of its object identity.
final class OwnIdentity: GraphObserver {
    let observerID: ObserverID
    init(_ observerID: ObserverID) { self.observerID = observerID }
}
