import ObserverGraph
import Testing

/// Follows an observable array by applying every delivered changeset to its own copy, and
/// reports any changeset that does not reproduce the delivered array.
final class Mirror<Element: Equatable & Sendable>: Sendable {
    private let state = GraphLock<(mirror: [Element], events: Int, problems: [String])>(([], 0, []))
    let label: String

    init(_ label: String = "mirror") { self.label = label }

    @Sendable func apply(_ change: ArrayChange<Element>) {
        state.withLock { state in
            state.events += 1
            do {
                let rebuilt = try change.changeset.apply(to: state.mirror, newElements: change.array)
                if rebuilt != change.array {
                    state.problems.append(
                        "\(label): \(change.changeset) rebuilt \(rebuilt), expected \(change.array)")
                }
            } catch {
                state.problems.append("\(label): \(error) for \(state.mirror) → \(change.array)")
            }
            state.mirror = change.array
        }
    }

    var mirror: [Element] { state.withLock { $0.mirror } }
    var events: Int { state.withLock { $0.events } }
    var problems: [String] { state.withLock { $0.problems } }
}

/// Records the changesets an array delivers.
final class ChangeLog<Element: Sendable>: Sendable {
    private let storage = GraphLock<[ArrayChangeset]>([])
    @Sendable func record(_ change: ArrayChange<Element>) { storage.withLock { $0.append(change.changeset) } }
    var changesets: [ArrayChangeset] { storage.withLock { $0 } }
    var last: ArrayChangeset? { changesets.last }
}

/// Equatable but not Hashable, to exercise the Equatable-only diff.
struct Token: Equatable, Sendable {
    let value: Int
}

/// An element with an identity and a value, for identity-based diffs.
struct Tagged: Equatable, Sendable {
    let id: Int
    var value: Int
}

@Suite("Observable arrays: the source document's examples and the API")
struct ObservableArrayTests {
    @Test("Steve, Tim, John, Mark: inserts [2], deletes [2], updates [1]")
    func sourceDocumentExamples() throws {
        let names = ObservableArray(["Steve", "Tim"])
        let log = ChangeLog<String>()
        let token = names.observeValuesNonisolated(log.record)
        #expect(log.last == ArrayChangeset(inserts: [0, 1]))
        names.append("John")
        #expect(log.last == ArrayChangeset(inserts: [2]))
        #expect(names.array == ["Steve", "Tim", "John"])
        try names.removeLast()
        #expect(log.last == ArrayChangeset(deletes: [2]))
        names[1] = "Mark"
        #expect(log.last == ArrayChangeset(updates: [1]))
        #expect(names.array == ["Steve", "Mark"])
        #expect(log.changesets.count == 4)
        withExtendedLifetime(token) {}
    }

    @Test("replace(with:) diffs: [1, 2, 3] → [0, 1, 3, 4] deletes [1], inserts [0, 3]")
    func replaceDiffs() {
        let numbers = ObservableArray([1, 2, 3])
        let log = ChangeLog<Int>()
        let token = numbers.observeValuesNonisolated(log.record)
        numbers.replace(with: [0, 1, 3, 4])
        #expect(log.last == ArrayChangeset(deletes: [1], inserts: [0, 3]))
        #expect(log.last?.description == "deletes [1], inserts [0, 3]")
        numbers.replace(with: [0, 1, 3, 4])
        #expect(log.changesets.count == 2)  // equal content: nothing delivered
        numbers.replace(with: [4, 0, 1, 3])
        #expect(log.last == ArrayChangeset(moves: [.init(from: 3, to: 0)]))
        #expect(
            ArrayChangeset.diff(from: [Token(value: 1), Token(value: 2)], to: [Token(value: 2)])
                == ArrayChangeset(deletes: [0]))
        withExtendedLifetime(token) {}
    }

    @Test("reload(with:) delivers a reload, except an empty array reloaded with nothing: no event")
    func reloadOfNothingWithNothing() {
        let numbers = ObservableArray<Int>()
        let log = ChangeLog<Int>()
        let token = numbers.observeValuesNonisolated(log.record)
        #expect(log.changesets.count == 1)  // what it starts from
        #expect(numbers.reload(with: []))
        #expect(log.changesets.count == 1)
        #expect(numbers.reload(with: [7]))
        #expect(log.last == .reload(oldCount: 0, newCount: 1))
        #expect(numbers.reload(with: []))
        #expect(log.last == .reload(oldCount: 1, newCount: 0))
        #expect(numbers.reload(with: []))
        #expect(log.changesets.count == 3)
        #expect(numbers.array == [])
        withExtendedLifetime(token) {}
    }

    @Test("Mapped names → lengths: appending Tony delivers inserts [2] downstream too")
    func mappedArray() {
        let names = ObservableArray(["Steve", "Tim"])
        let lengths = names.map { $0.count }
        let log = ChangeLog<Int>()
        let token = lengths.observeValuesNonisolated(log.record)
        names.append("Tony")
        #expect(lengths.array == [5, 3, 4])
        #expect(log.last == ArrayChangeset(inserts: [2]))
        names[0] = "Al"
        #expect(lengths.array == [2, 3, 4])
        #expect(log.last == ArrayChangeset(updates: [0]))
        withExtendedLifetime(token) {}
    }

    @Test("Binding a derived array into another observable array")
    func bindToTarget() throws {
        let names = ObservableArray(["Steve", "Tim"])
        let target = ObservableArray<Int>([9, 9, 9])
        let log = ChangeLog<Int>()
        let targetToken = target.observeValuesNonisolated(log.record)
        let lengths = names.map { $0.count }
        let binding = lengths.bind(to: target)
        #expect(target.array == [5, 3])
        #expect(log.last == ArrayChangeset(deletes: [0, 1, 2], inserts: [0, 1]))  // first: a reload
        names.append("Tony")
        #expect(target.array == [5, 3, 4])
        #expect(log.last == ArrayChangeset(inserts: [2]))
        try names.move(from: 2, to: 0)
        #expect(target.array == [4, 5, 3])
        #expect(log.last == ArrayChangeset(moves: [.init(from: 2, to: 0)]))
        binding.cancel()
        names.append("Bob")
        #expect(target.array == [4, 5, 3])
        withExtendedLifetime(targetToken) {}
    }

    @Test("A filtered array translates indices; updates that cross the filter become deletes or inserts")
    func filteredArray() throws {
        let numbers = ObservableArray([1, 2, 3, 4, 5, 6])
        let evens = numbers.filter { $0 % 2 == 0 }
        let log = ChangeLog<Int>()
        let token = evens.observeValuesNonisolated(log.record)
        #expect(evens.array == [2, 4, 6])
        numbers.append(8)
        #expect(log.last == ArrayChangeset(inserts: [3]))
        try numbers.set(10, at: 0)  // 1 → 10 enters the filter
        #expect(evens.array == [10, 2, 4, 6, 8])
        #expect(log.last == ArrayChangeset(inserts: [0]))
        try numbers.set(7, at: 1)  // 2 → 7 leaves it
        #expect(evens.array == [10, 4, 6, 8])
        #expect(log.last == ArrayChangeset(deletes: [1]))
        try numbers.set(12, at: 3)  // 4 → 12 stays in: an update
        #expect(log.last == ArrayChangeset(updates: [1]))
        let before = log.changesets.count
        numbers.append(9)  // not included: the filtered array does not change
        #expect(log.changesets.count == before)
        withExtendedLifetime(token) {}
    }

    @Test("A chain of derived arrays keeps its middle links and stays in step")
    func chainedDerivedArrays() {
        let names = ObservableArray(["Steve", "Tim"])
        let short = names.map { $0.count }.filter { $0 < 5 }
        let log = ChangeLog<Int>()
        let token = short.observeValuesNonisolated(log.record)
        names.append("Tony")
        names.append("Alexander")
        names[0] = "Al"
        #expect(short.array == [2, 3, 4])
        #expect(
            log.changesets == [
                ArrayChangeset(inserts: [0]), ArrayChangeset(inserts: [1]), ArrayChangeset(inserts: [0]),
            ])
        withExtendedLifetime(token) {}
    }

    @Test("An observable array can follow a stream of whole arrays by diffing (the diff operator)")
    func diffOperator() {
        let reloads = ObservableValue([1, 2, 3])
        let items = ReadOnlyObservableArray(diffing: reloads)
        let log = ChangeLog<Int>()
        let token = items.observeValuesNonisolated(log.record)
        reloads.value = [1, 3, 4]
        #expect(items.array == [1, 3, 4])
        #expect(log.last == ArrayChangeset(deletes: [1], inserts: [2]))

        let tagged = ObservableValue([Tagged(id: 1, value: 0), Tagged(id: 2, value: 0)])
        let byID = ReadOnlyObservableArray(diffing: tagged, identifiedBy: \.id)
        let taggedLog = ChangeLog<Tagged>()
        let taggedToken = byID.observeValuesNonisolated(taggedLog.record)
        tagged.value = [Tagged(id: 1, value: 0), Tagged(id: 2, value: 7)]
        #expect(taggedLog.last == ArrayChangeset(updates: [1]))
        tagged.value = [Tagged(id: 2, value: 7), Tagged(id: 1, value: 0)]
        #expect(taggedLog.last == ArrayChangeset(moves: [.init(from: 1, to: 0)]))
        withExtendedLifetime((token, taggedToken)) {}
    }

    @Test("Bad indices are typed errors that change nothing and deliver nothing")
    func badInput() {
        let array = ObservableArray([1, 2])
        let log = ChangeLog<Int>()
        let token = array.observeValuesNonisolated(log.record)
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 2, count: 2)) { try array.remove(at: 2) }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 3, count: 2)) {
            try array.insert(0, at: 3)
        }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: -1, count: 2)) {
            try array.set(0, at: -1)
        }
        #expect(throws: ObservableArrayError.indexOutOfRange(index: 5, count: 2)) {
            try array.move(from: 0, to: 5)
        }
        array[7] = 1  // documented no-op
        #expect(array[7] == nil && array[1] == 2)
        #expect(throws: ArrayChangesetError.self) {
            try ArrayChangeset(deletes: [5]).apply(to: [1], newElements: [Int]())
        }
        array.removeAll()
        #expect(throws: ObservableArrayError.empty) { try array.removeLast() }
        array.finish()
        #expect(throws: ObservableArrayError.terminated) { try array.insert(1, at: 0) }
        #expect(!array.append(1))
        // A batch after termination: its body runs once, on the final content, and its changes
        // are dropped; it returns what that run returned.
        var runs = 0
        let seen = array.batch { batch -> Int in
            runs += 1
            batch.append(3)
            return batch.count
        }
        #expect(runs == 1 && seen == 1 && array.array == [])
        #expect(log.changesets == [ArrayChangeset(inserts: [0, 1]), ArrayChangeset(deletes: [0, 1])])
        withExtendedLifetime(token) {}
    }

    @Test("A batch delivers one event with one merged changeset")
    func batch() throws {
        let names = ObservableArray(["a", "b", "c", "d"])
        let log = ChangeLog<String>()
        let mirror = Mirror<String>()
        let tokens = [
            names.observeValuesNonisolated(log.record), names.observeValuesNonisolated(mirror.apply),
        ]
        try names.batch { batch in
            try batch.remove(at: 0)  // a
            batch.append("e")
            try batch.set("C", at: 1)  // c → C
            try batch.move(from: 2, to: 0)  // d to the front
        }
        #expect(names.array == ["d", "b", "C", "e"])
        #expect(log.changesets.count == 2)
        #expect(
            log.last
                == ArrayChangeset(deletes: [0], inserts: [3], updates: [2], moves: [.init(from: 3, to: 0)]))
        #expect(mirror.problems.isEmpty)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try names.batch { batch in
                batch.append("never")
                throw Abort()
            }
        }
        #expect(names.array == ["d", "b", "C", "e"] && log.changesets.count == 2)
        withExtendedLifetime(tokens) {}
    }

    @Test("The example of batch's doc comment, as written there")
    func batchDocExample() throws {
        let names = ObservableArray(["Ann", "Bob"])
        let log = ChangeLog<String>()
        let token = names.observeValuesNonisolated(log.record)
        try names.batch { batch in
            batch.append("Tony")
            try batch.remove(at: 0)
            try batch.set("Mark", at: 0)
        }
        #expect(names.array == ["Mark", "Tony"])
        // Ann deleted, Tony inserted, Bob set to Mark.
        #expect(log.last == ArrayChangeset(deletes: [0], inserts: [1], updates: [1]))
        withExtendedLifetime(token) {}
    }

    @Test("A mutation from inside an observer is delivered after the current event, valid for every observer")
    func reentrantMutation() {
        let array = ObservableArray<Int>()
        let first = Mirror<Int>("first")
        let second = Mirror<Int>("second")
        let grower = array.observeValuesNonisolated { change in
            if change.array.first == 100 && change.array.count < 5 { array.append(change.array.count) }
        }
        let tokens = [
            array.observeValuesNonisolated(first.apply), array.observeValuesNonisolated(second.apply),
        ]
        array.append(100)
        #expect(array.array == [100, 1, 2, 3, 4])
        #expect(first.mirror == array.array && second.mirror == array.array)
        #expect(first.problems.isEmpty && second.problems.isEmpty)
        #expect(first.events == 6)  // the replay of [] then five appends
        withExtendedLifetime((grower, tokens)) {}
    }
}

@Suite("Observable arrays: property-based checks (seeded; the seed is in every failure)")
struct ObservableArrayPropertyTests {
    static func randomArray(_ random: inout SeededGenerator, maxCount: Int = 8) -> [Int] {
        (0..<Int.random(in: 0...maxCount, using: &random)).map { _ in Int.random(in: 0..<6, using: &random) }
    }

    static func randomOperation(on array: ObservableArray<Int>, _ random: inout SeededGenerator) {
        let count = array.count
        let value = Int.random(in: 0..<6, using: &random)
        switch Int.random(in: 0..<11, using: &random) {
        case 0: array.append(value)
        case 1: array.append(contentsOf: randomArray(&random, maxCount: 3))
        case 2: try? array.insert(value, at: Int.random(in: 0...count, using: &random))
        case 3: if count > 0 { _ = try? array.remove(at: Int.random(in: 0..<count, using: &random)) }
        case 4: _ = try? array.removeLast()
        case 5: if Int.random(in: 0..<4, using: &random) == 0 { array.removeAll() }
        case 6: if count > 0 { array[Int.random(in: 0..<count, using: &random)] = value }
        case 7:
            if count > 0 {
                try? array.move(
                    from: Int.random(in: 0..<count, using: &random),
                    to: Int.random(in: 0..<count, using: &random))
            }
        case 8: array.replace(with: randomArray(&random))
        case 9:
            array.batch { batch in
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let n = batch.count
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: batch.append(Int.random(in: 0..<6, using: &random))
                    case 1: try? batch.insert(7, at: Int.random(in: 0...n, using: &random))
                    case 2: if n > 0 { _ = try? batch.remove(at: Int.random(in: 0..<n, using: &random)) }
                    case 3:
                        if n > 0 {
                            try? batch.set(
                                Int.random(in: 0..<6, using: &random),
                                at: Int.random(in: 0..<n, using: &random))
                        }
                    case 4:
                        if n > 0 {
                            try? batch.move(
                                from: Int.random(in: 0..<n, using: &random),
                                to: Int.random(in: 0..<n, using: &random))
                        }
                    default: if Int.random(in: 0..<5, using: &random) == 0 { batch.removeAll() }
                    }
                }
            }
        default: array.replace(with: array.array.shuffled(using: &random))
        }
    }

    @Test("Random operations, batches and derived arrays: every changeset reproduces the array")
    func randomOperations() {
        for seed in UInt64(1)...UInt64(1_500) {
            var random = SeededGenerator(seed: seed)
            let array = ObservableArray(Self.randomArray(&random))
            let mirror = Mirror<Int>("array")
            let doubled = array.map { $0 * 2 }
            let odd = array.filter { $0 % 2 == 1 }
            let doubledMirror = Mirror<Int>("map")
            let oddMirror = Mirror<Int>("filter")
            let tokens = [
                array.observeValuesNonisolated(mirror.apply),
                doubled.observeValuesNonisolated(doubledMirror.apply),
                odd.observeValuesNonisolated(oddMirror.apply),
            ]
            for _ in 0..<25 { Self.randomOperation(on: array, &random) }
            let problems = mirror.problems + doubledMirror.problems + oddMirror.problems
            #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(3))")
            #expect(mirror.mirror == array.array, "seed \(seed)")
            #expect(doubled.array == array.array.map { $0 * 2 }, "seed \(seed)")
            #expect(odd.array == array.array.filter { $0 % 2 == 1 }, "seed \(seed)")
            #expect(doubledMirror.mirror == doubled.array && oddMirror.mirror == odd.array, "seed \(seed)")
            withExtendedLifetime(tokens) {}
            if !problems.isEmpty { break }
        }
    }

    /// The length of a longest common subsequence, by dynamic programming (the reference).
    static func lcs(_ a: [Int], _ b: [Int]) -> Int {
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in a.indices {
            for j in b.indices {
                table[i + 1][j + 1] = a[i] == b[j] ? table[i][j] + 1 : max(table[i][j + 1], table[i + 1][j])
            }
        }
        return table[a.count][b.count]
    }

    @Test("Random diffs, with duplicates and empty arrays: valid, and never longer than the shortest script")
    func randomDiffs() throws {
        for seed in UInt64(1)...UInt64(3_000) {
            var random = SeededGenerator(seed: seed)
            let old = Self.randomArray(&random, maxCount: 12)
            let new = Self.randomArray(&random, maxCount: 12)
            let shortest = old.count + new.count - 2 * Self.lcs(old, new)
            let hashable = ArrayChangeset.diff(from: old, to: new)
            let equatable = ArrayChangeset.diff(from: old.map(Token.init), to: new.map(Token.init))
            for (name, changeset) in [("hashable", hashable), ("equatable", equatable)] {
                let rebuilt = try changeset.apply(to: old, newElements: new)
                #expect(rebuilt == new, "seed \(seed) \(name): \(old) → \(new) by \(changeset)")
                let cost = changeset.deletes.count + changeset.inserts.count + 2 * changeset.moves.count
                #expect(cost <= shortest, "seed \(seed) \(name): \(changeset) vs shortest \(shortest)")
                #expect(changeset.updates.isEmpty)
            }
            let oldTagged = old.enumerated().map { Tagged(id: $0.element, value: $0.offset) }
            let newTagged = new.enumerated().map { Tagged(id: $0.element, value: $0.offset % 3) }
            let byID = ArrayChangeset.diff(from: oldTagged, to: newTagged, identifiedBy: \.id)
            #expect(try byID.apply(to: oldTagged, newElements: newTagged) == newTagged, "seed \(seed) by id")
        }
    }

    @Test("A large diff with 1% changed stays exact")
    func largeDiff() throws {
        var random = SeededGenerator(seed: 99)
        let old = Array(0..<10_000)
        var new = old
        for _ in 0..<50 { new.remove(at: Int.random(in: 0..<new.count, using: &random)) }
        for i in 0..<50 { new.insert(20_000 + i, at: Int.random(in: 0...new.count, using: &random)) }
        let changeset = ArrayChangeset.diff(from: old, to: new)
        #expect(changeset.deletes.count == 50 && changeset.inserts.count == 50 && changeset.moves.isEmpty)
        #expect(try changeset.apply(to: old, newElements: new) == new)
        let reversed = ArrayChangeset.diff(from: old, to: old.reversed())  // beyond the minimal-script bound
        #expect(try reversed.apply(to: old, newElements: old.reversed()) == old.reversed())
    }

    @Test("Concurrent mutations from several threads: each observer receives valid changesets in order")
    func concurrentMutations() {
        let array = ObservableArray<Int>()
        let mirrors = (0..<3).map { Mirror<Int>("observer \($0)") }
        let tokens = mirrors.map { array.observeValuesNonisolated($0.apply) }
        race(threads: 4) { thread in
            var random = SeededGenerator(seed: UInt64(thread) + 500)
            for _ in 0..<400 { Self.randomOperation(on: array, &random) }
        }
        for mirror in mirrors {
            #expect(mirror.problems.isEmpty, "\(mirror.problems.prefix(2))")
            #expect(mirror.mirror == array.array)
        }
        #expect(mirrors[0].events == mirrors[1].events && mirrors[1].events == mirrors[2].events)
        withExtendedLifetime(tokens) {}
    }
}
