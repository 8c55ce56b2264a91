import ObserverGraph
import Testing

/// The derived arrays of one source, and what each of them was told.
private struct Derivations {
    let source = ObservableArray([1, 2, 3, 4])
    let stream = ObservableValue([1, 2])
    let mapped: ReadOnlyObservableArray<Int>
    let filtered: ReadOnlyObservableArray<Int>
    let diffed: ReadOnlyObservableArray<Int>
    let target = ObservableArray<Int>()
    let binding: SubscriptionToken
    let recorders = (0..<4).map { _ in Recorder<ArrayChange<Int>>() }
    let tokens: [SubscriptionToken]

    init() {
        mapped = source.map { $0 * 10 }
        filtered = source.filter { $0 % 2 == 0 }
        diffed = ReadOnlyObservableArray(diffing: stream)
        binding = source.bind(to: target)
        tokens = zip([mapped, filtered, diffed, target], recorders).map { $0.observeNonisolated($1.record) }
    }

    var all: [ReadOnlyObservableArray<Int>] { [mapped, filtered, diffed, target] }
}

@Suite("Derived arrays: termination, read-only, O(k) changes")
struct ObservableArrayDerivedTests {
    @Test("map, filter, diffing and bind(to:) targets finish when their source finishes")
    func derivedArraysFinish() {
        let d = Derivations()
        d.source.append(6)
        d.stream.value = [2, 3]
        #expect(d.source.finish() && d.stream.finish())
        for (array, recorder) in zip(d.all, d.recorders) {
            #expect(array.terminalEvent == .finished)
            #expect(recorder.events.last == .finished)
            #expect(recorder.events.filter(\.isTerminal).count == 1)
        }
        #expect(d.mapped.array == [10, 20, 30, 40, 60])
        #expect(d.filtered.array == [2, 4, 6])
        #expect(d.diffed.array == [2, 3])
        #expect(d.target.array == [1, 2, 3, 4, 6])
        withExtendedLifetime((d.binding, d.tokens)) {}
    }

    @Test("map, filter, diffing and bind(to:) targets fail with their source's error")
    func derivedArraysFail() {
        let d = Derivations()
        #expect(d.source.fail(Boom(code: 7)) && d.stream.fail(Boom(code: 7)))
        for (array, recorder) in zip(d.all, d.recorders) {
            #expect(array.terminalEvent == .failed(Boom(code: 7)))
            #expect(recorder.events.last == .failed(Boom(code: 7)))
        }
        withExtendedLifetime((d.binding, d.tokens)) {}
    }

    @Test(
        "A for-try-await loop over a derived array's values() ends when the source finishes",
        .timeLimit(.minutes(3)))
    func asyncLoopEnds() async throws {
        let source = ObservableArray([1, 2, 3])
        let evens = source.map { $0 * 2 }.filter { $0 > 2 }
        let stream = evens.values()
        source.append(4)
        source.finish()
        var seen: [[Int]] = []
        for try await change in stream { seen.append(change.array) }
        #expect(seen == [[4, 6], [4, 6, 8]])
        await #expect(throws: Boom(code: 1)) {
            let failing = ObservableArray([1])
            let mapped = failing.map { $0 }
            let values = mapped.values()
            failing.fail(Boom(code: 1))
            for try await _ in values {}
        }
    }

    @Test("Deriving from a source that has already finished takes its content and finishes")
    func deriveFromFinished() {
        let source = ObservableArray([1, 2, 3])
        source.finish()
        let mapped = source.map { $0 + 1 }
        let filtered = source.filter { $0 != 2 }
        #expect(mapped.array == [2, 3, 4] && mapped.terminalEvent == .finished)
        #expect(filtered.array == [1, 3] && filtered.terminalEvent == .finished)
    }

    @Test("A bind(to:) target changed by someone else, its count unchanged, reloads at the next change")
    func bindTargetChangedElsewhere() throws {
        let source = ObservableArray([1, 2, 3])
        let target = ObservableArray<Int>()
        let log = ChangeLog<Int>()
        let token = target.observeValuesNonisolated(log.record)
        let binding = source.bind(to: target)
        #expect(target.array == [1, 2, 3] && log.last == ArrayChangeset(inserts: [0, 1, 2]))
        // Someone else sets an element (the count stays): the next change finds the target out
        // of step and reloads it from the source, where it would otherwise keep the stray 9.
        try target.set(9, at: 0)
        source.append(4)
        #expect(target.array == [1, 2, 3, 4])
        #expect(log.last == ArrayChangeset(deletes: [0, 1, 2], inserts: [0, 1, 2, 3]))
        // In step again: the next change is applied as it is.
        try source.set(5, at: 1)
        #expect(target.array == [1, 5, 3, 4] && log.last == ArrayChangeset(updates: [1]))
        // A move by someone else, then a change of the source that keeps the count.
        try target.move(from: 0, to: 3)
        try source.set(6, at: 3)
        #expect(target.array == [1, 5, 3, 6])
        #expect(log.last == ArrayChangeset(deletes: [0, 1, 2, 3], inserts: [0, 1, 2, 3]))
        #expect(log.changesets.count == 7)  // with the empty first value and the two changes by someone else
        withExtendedLifetime((token, binding)) {}
    }

    @Test("init(diffing:) of a derived value keeps its chain alive, diffs each value, ends with it")
    func diffingDerivedValue() throws {
        let items = ObservableArray([Tagged(id: 1, value: 10), Tagged(id: 2, value: 20)])
        let minimum = ObservableValue(0)
        weak var weakChain: DerivedValue<[Tagged]>?
        let recorders = (0..<2).map { _ in ChangeLog<Tagged>() }
        let (byValue, byID): (ReadOnlyObservableArray<Tagged>, ReadOnlyObservableArray<Tagged>) = {
            let chain = items.combineLatest(minimum).map { items, minimum in
                items.array.filter { $0.value >= minimum }
            }
            weakChain = chain
            return (
                ReadOnlyObservableArray(diffing: chain),
                ReadOnlyObservableArray(diffing: chain, identifiedBy: \.id)
            )
        }()
        let tokens = zip([byValue, byID], recorders).map { $0.observeValuesNonisolated($1.record) }
        #expect(weakChain != nil)  // kept by the two arrays alone
        minimum.value = 15
        try items.set(Tagged(id: 2, value: 25), at: 1)
        items.append(Tagged(id: 3, value: 30))
        #expect(byValue.array == [Tagged(id: 2, value: 25), Tagged(id: 3, value: 30)])
        #expect(byID.array == byValue.array)
        #expect(
            recorders[0].changesets == [
                ArrayChangeset(inserts: [0, 1]), ArrayChangeset(deletes: [0]),
                ArrayChangeset(deletes: [0], inserts: [0]), ArrayChangeset(inserts: [1]),
            ])
        #expect(
            recorders[1].changesets == [
                ArrayChangeset(inserts: [0, 1]), ArrayChangeset(deletes: [0]), ArrayChangeset(updates: [0]),
                ArrayChangeset(inserts: [1]),
            ])
        minimum.fail(Boom(code: 4))
        #expect(
            byValue.terminalEvent == .failed(Boom(code: 4)) && byID.terminalEvent == .failed(Boom(code: 4)))
        withExtendedLifetime(tokens) {}
    }

    @Test("Binding to a source that has already terminated takes its content, then terminates the same way")
    func bindToTerminated() {
        let finished = ObservableArray([1, 2, 3])
        finished.finish()
        let failed = ObservableArray([4])
        failed.fail(Boom(code: 3))
        let targets = [ObservableArray([9, 9]), ObservableArray<Int>()]
        let recorders = targets.map { _ in Recorder<ArrayChange<Int>>() }
        let tokens = zip(targets, recorders).map { $0.observeNonisolated($1.record) }
        let bindings = [finished.bind(to: targets[0]), failed.bind(to: targets[1])]
        #expect(targets[0].array == [1, 2, 3] && targets[0].terminalEvent == .finished)
        #expect(targets[1].array == [4] && targets[1].terminalEvent == .failed(Boom(code: 3)))
        // First each target's own content, then the source's (a reload: out of step, or inserts
        // into the empty one), then the end.
        #expect(
            recorders[0].values.map(\.changeset) == [
                ArrayChangeset(inserts: [0, 1]), ArrayChangeset(deletes: [0, 1], inserts: [0, 1, 2]),
            ])
        #expect(recorders[1].values.map(\.changeset) == [ArrayChangeset(), ArrayChangeset(inserts: [0])])
        #expect(recorders[0].events.last == .finished && recorders[1].events.last == .failed(Boom(code: 3)))
        withExtendedLifetime((tokens, bindings)) {}
    }

    @Test("A derived array is a read-only array: it can be observed, read, mapped and filtered")
    func readOnlyAPI() throws {
        let names = ObservableArray(["Steve", "Tim"])
        let lengths: ReadOnlyObservableArray<Int> = names.map { $0.count }
        let short = lengths.filter { $0 < 5 }.map { "\($0)" }
        #expect(lengths[0] == 5 && lengths[2] == nil && lengths.count == 2)
        #expect(short.array == ["3"])
        // An ObservableArray is a ReadOnlyObservableArray too: one function can take either.
        func total(_ array: ReadOnlyObservableArray<Int>) -> Int { array.array.reduce(0, +) }
        #expect(total(lengths) == 8 && total(ObservableArray([1, 2])) == 3)
        #expect(!(lengths is ObservableArray<Int>))
    }

    @Test("A derived array observed through its token alone stays alive until the token is cancelled")
    func tokenKeepsDerivedArrayAlive() {
        let source = ObservableArray(["Laundry", "Tax"])
        let stream = ObservableValue([1, 2])
        let recorders = (0..<3).map { _ in Recorder<[Int]>() }
        weak var weakMapped: ReadOnlyObservableArray<Int>?
        weak var weakFiltered: ReadOnlyObservableArray<String>?
        weak var weakDiffed: ReadOnlyObservableArray<Int>?
        // Only the tokens are kept, as in `items.map(f).observeValues { … }.store(in: bag)`.
        let tokens: [SubscriptionToken] = {
            let mapped = source.map { $0.count }
            let filtered = source.filter { $0.count <= 3 }
            let diffed = ReadOnlyObservableArray(diffing: stream)
            (weakMapped, weakFiltered, weakDiffed) = (mapped, filtered, diffed)
            return [
                mapped.observeValuesNonisolated { recorders[0].record(.value($0.array)) },
                filtered.observeValuesNonisolated { recorders[1].record(.value($0.array.map(\.count))) },
                diffed.observeValuesNonisolated { recorders[2].record(.value($0.array)) },
            ]
        }()
        source.append("Gym")
        stream.value = [2, 3]
        #expect(recorders[0].values == [[7, 3], [7, 3, 3]])
        #expect(recorders[1].values == [[3], [3, 3]])
        #expect(recorders[2].values == [[1, 2], [2, 3]])
        #expect(weakMapped != nil && weakFiltered != nil && weakDiffed != nil)
        for token in tokens { token.cancel() }
        #expect(weakMapped == nil && weakFiltered == nil && weakDiffed == nil)
        source.append("Bank")
        #expect(recorders.map(\.values.count) == [2, 2, 2])
    }

    @Test("Derived arrays follow middle inserts, deletes, moves and batches exactly")
    func positionalChanges() throws {
        let source = ObservableArray(Array(0..<40))
        let mapped = source.map { $0 * 2 }
        let filtered = source.filter { $0 % 3 == 0 }
        let mappedMirror = Mirror<Int>("map")
        let filteredMirror = Mirror<Int>("filter")
        let tokens = [
            mapped.observeValuesNonisolated(mappedMirror.apply),
            filtered.observeValuesNonisolated(filteredMirror.apply),
        ]
        try source.insert(99, at: 5)
        try source.remove(at: 17)
        try source.move(from: 3, to: 30)
        try source.set(300, at: 10)
        source.batch { batch in
            for i in stride(from: 30, to: 0, by: -7) { _ = try? batch.remove(at: i) }
            batch.append(-3)
            try? batch.insert(6, at: 2)
            try? batch.move(from: 0, to: 20)
            try? batch.set(1, at: 4)
        }
        for _ in 0..<100 { source.append(source.count) }
        #expect(mapped.array == source.array.map { $0 * 2 })
        #expect(filtered.array == source.array.filter { $0 % 3 == 0 })
        #expect(mappedMirror.problems.isEmpty && filteredMirror.problems.isEmpty)
        #expect(mappedMirror.mirror == mapped.array && filteredMirror.mirror == filtered.array)
        withExtendedLifetime(tokens) {}
    }

    @Test("Appends, sets and removals at the end reach map, filter and bind(to:) with exact changesets")
    func singleListChanges() throws {
        let source = ObservableArray([1, 2, 3])
        let mapped = source.map { $0 * 10 }
        let evens = source.filter { $0 % 2 == 0 }
        let target = ObservableArray<Int>()
        let logs = (0..<3).map { _ in ChangeLog<Int>() }
        let tokens = [
            mapped.observeValuesNonisolated(logs[0].record), evens.observeValuesNonisolated(logs[1].record),
            target.observeValuesNonisolated(logs[2].record), source.bind(to: target),
        ]
        source.append(4)
        source.append(5)  // not even: the filtered array does not change
        source.append(contentsOf: [6, 7, 8])
        try source.set(60, at: 5)  // stays in the filter: an update
        try source.set(3, at: 0)  // stays out: the filtered array does not change
        try source.set(12, at: 2)  // enters: an insert
        try source.set(5, at: 1)  // leaves: a delete
        try source.removeLast()
        source.append(contentsOf: [9, 11])  // none even
        #expect(mapped.array == [30, 50, 120, 40, 50, 600, 70, 90, 110])
        #expect(evens.array == [12, 4, 60])
        #expect(target.array == source.array)
        source.removeAll()
        source.append(2)
        #expect(mapped.array == [20] && evens.array == [2] && target.array == [2])
        let everyIndex = ArrayChangeset(inserts: [0, 1, 2])  // a new observer's first event
        #expect(
            logs[0].changesets == [
                everyIndex, ArrayChangeset(inserts: [3]), ArrayChangeset(inserts: [4]),
                ArrayChangeset(inserts: [5, 6, 7]), ArrayChangeset(updates: [5]),
                ArrayChangeset(updates: [0]),
                ArrayChangeset(updates: [2]), ArrayChangeset(updates: [1]), ArrayChangeset(deletes: [7]),
                ArrayChangeset(inserts: [7, 8]), ArrayChangeset(deletes: Array(0..<9)),
                ArrayChangeset(inserts: [0]),
            ])
        #expect(
            logs[1].changesets == [
                ArrayChangeset(inserts: [0]), ArrayChangeset(inserts: [1]), ArrayChangeset(inserts: [2, 3]),
                ArrayChangeset(updates: [2]), ArrayChangeset(inserts: [1]), ArrayChangeset(deletes: [0]),
                ArrayChangeset(deletes: [3]), ArrayChangeset(deletes: [0, 1, 2]),
                ArrayChangeset(inserts: [0]),
            ])
        // The target, empty when observed, then takes the source's content and each change.
        #expect(logs[2].changesets == [ArrayChangeset()] + logs[0].changesets)
        withExtendedLifetime(tokens) {}
    }
}
