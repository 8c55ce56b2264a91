import ObserverGraph
import Testing

@Suite("Array changesets as values: equal lists are equal, whatever built them")
struct ArrayChangesetValueTests {
    @Test("What each single mutation delivers equals the initializer's changeset, hash included")
    func singleMutations() throws {
        let array = ObservableArray([10, 20, 30])
        let log = ChangeLog<Int>()
        let token = array.observeValuesNonisolated(log.record)
        array.append(40)
        array.append(contentsOf: [50, 60])
        try array.insert(5, at: 0)
        array[1] = 11
        try array.remove(at: 2)
        _ = try array.removeLast()
        try array.move(from: 0, to: 3)
        array.removeAll()
        let expected: [ArrayChangeset] = [
            ArrayChangeset(inserts: [0, 1, 2]),  // the replay
            ArrayChangeset(inserts: [3]),
            ArrayChangeset(inserts: [4, 5]),
            ArrayChangeset(inserts: [0]),
            ArrayChangeset(updates: [1]),
            ArrayChangeset(deletes: [2]),
            ArrayChangeset(deletes: [5]),
            ArrayChangeset(moves: [.init(from: 0, to: 3)]),
            ArrayChangeset(deletes: [0, 1, 2, 3, 4]),
        ]
        #expect(log.changesets == expected)
        #expect(log.changesets.map(\.hashValue) == expected.map(\.hashValue))
        #expect(Set(log.changesets + expected).count == expected.count)
        #expect(log.changesets.map(\.description)[1...3] == ["inserts [3]", "inserts [4, 5]", "inserts [0]"])
        withExtendedLifetime(token) {}
    }

    @Test("The initializer sorts every list, and keeps each list's values")
    func initializerSorts() {
        let changeset = ArrayChangeset(
            deletes: [4, 1], inserts: [3, 0, 2], updates: [2],
            moves: [.init(from: 0, to: 5), .init(from: 3, to: 1)])
        #expect(changeset.deletes == [1, 4])
        #expect(changeset.inserts == [0, 2, 3])
        #expect(changeset.updates == [2])
        #expect(changeset.moves == [.init(from: 3, to: 1), .init(from: 0, to: 5)])
        #expect(!changeset.isEmpty)
        #expect(
            changeset
                == ArrayChangeset(
                    deletes: [1, 4], inserts: [0, 2, 3], updates: [2],
                    moves: [.init(from: 3, to: 1), .init(from: 0, to: 5)]))
        #expect(changeset != ArrayChangeset(deletes: [1, 4], inserts: [0, 2, 3], updates: [2]))
        #expect(ArrayChangeset(updates: [3, 1, 2]).updates == [1, 2, 3])
    }

    @Test("Empty lists: no change, equal to each other, whatever the initializer was given")
    func emptyLists() {
        let empties = [
            ArrayChangeset(), ArrayChangeset(deletes: [], inserts: []), ArrayChangeset(moves: []),
            .reload(oldCount: 0, newCount: 0), .reload(oldCount: -3, newCount: -1),
        ]
        for empty in empties {
            #expect(empty.isEmpty)
            #expect(empty == ArrayChangeset())
            #expect(empty.hashValue == ArrayChangeset().hashValue)
            #expect(empty.description == "no change")
            #expect(empty.deletes == [] && empty.inserts == [] && empty.updates == [] && empty.moves == [])
        }
        #expect(ArrayChangeset(inserts: [0]) != ArrayChangeset(deletes: [0]))
        #expect(ArrayChangeset(inserts: [0]) != ArrayChangeset())
        #expect(ArrayChangeset(updates: [0]) != ArrayChangeset(inserts: [0], updates: [0]))
    }

    @Test("A diff that fills several lists equals the initializer's changeset with the same lists")
    func mixedLists() throws {
        let old = [1, 2, 3, 4, 5]
        let new = [5, 1, 3, 9, 4]
        let diff = ArrayChangeset.diff(from: old, to: new)
        let rebuilt = ArrayChangeset(
            deletes: diff.deletes, inserts: diff.inserts, updates: diff.updates, moves: diff.moves)
        #expect(diff == rebuilt && diff.hashValue == rebuilt.hashValue)
        #expect(diff.deletes == [1])
        #expect(diff.inserts == [3])
        #expect(diff.moves == [.init(from: 4, to: 0)])
        #expect(try diff.apply(to: old, newElements: new) == new)
        let reload = ArrayChangeset.reload(oldCount: 2, newCount: 3)
        #expect(reload.deletes == [0, 1] && reload.inserts == [0, 1, 2])
        #expect(reload == ArrayChangeset(deletes: [1, 0], inserts: [2, 1, 0]))
        #expect(reload.description == "deletes [0, 1], inserts [0, 1, 2]")
    }
}
