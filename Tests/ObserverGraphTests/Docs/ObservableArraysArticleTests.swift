import ObserverGraph
import Testing

// The code blocks of the article "Observable arrays and table updates"
// (ObserverGraph.docc/ObservableArrays.md), verbatim: DocSnippetTests fails when a block of the
// article is not found here. Its `print` calls are recorded, and checked against its comments.
// The blocks run on the main actor, as the article says.

@MainActor
final class ListViewModel {
    private(set) var rows: [String] = []
    private var token: SubscriptionToken?

    init(items: ObservableArray<String>) {
        token = items.observeValuesCoalesced { [weak self] change in
            self?.rows = change.array  // a table view applies change.changeset in one batch
        }
    }
}

@MainActor
final class InboxViewModel {
    private(set) var sections: [ArraySection<String, String>] = []
    private var token: SubscriptionToken?

    init(inbox: ObservableSectionedArray<String, String>) {
        token = inbox.observeValuesCoalesced { [weak self] change in
            self?.sections = change.sections  // a table view applies change.changeset
        }
    }
}

@Suite("Docs: Observable arrays and table updates", .timeLimit(.minutes(3)))
@MainActor
struct ObservableArraysArticleTests {
    /// What the blocks print: their `print` calls resolve to this method.
    let output = EventLog()

    func print(_ items: Any...) {
        output.append(items.map { "\($0)" }.joined(separator: " "))
    }

    @Test("Each mutation delivers the new array and its changeset")
    func mutations() throws {
        let names = ObservableArray(["Steve", "Tim"])
        let token = names.observeValues { print($0.array, $0.changeset) }  // first: inserts [0, 1]
        names.append("John")  // ["Steve", "Tim", "John"] inserts [2]
        try names.removeLast()  // ["Steve", "Tim"] deletes [2]
        try names.set("Mark", at: 1)  // ["Steve", "Mark"] updates [1]
        try names.move(from: 1, to: 0)  // ["Mark", "Steve"] moves 1→0
        #expect(
            output.all == [
                #"["Steve", "Tim"] inserts [0, 1]"#,
                #"["Steve", "Tim", "John"] inserts [2]"#,
                #"["Steve", "Tim"] deletes [2]"#,
                #"["Steve", "Mark"] updates [1]"#,
                #"["Mark", "Steve"] moves 1→0"#,
            ])
        #expect(throws: ObservableArrayError.self) { try names.set("Nobody", at: 5) }
        #expect(names.array == ["Mark", "Steve"])
        token.cancel()
    }

    @Test("A mirror that applies every changeset stays equal to the array")
    func mirror() throws {
        let tasks = ObservableArray(["Laundry", "Dishes"])
        let mirror = ObservableValue<[String]>([])
        let follower = tasks.observeValues { change in
            mirror.update { $0 = (try? change.changeset.apply(to: $0, newElements: change.array)) ?? [] }
        }
        try tasks.insert("Taxes", at: 0)
        try tasks.remove(at: 2)  // mirror.value == tasks.array == ["Taxes", "Laundry"]
        #expect(mirror.value == ["Taxes", "Laundry"] && tasks.array == ["Taxes", "Laundry"])
        follower.cancel()
    }

    @Test("The coalesced view model: its rows at once, then the changes of another actor, coalesced")
    func coalescedViewModel() async {
        let items = ObservableArray(["Steve"])
        let model = ListViewModel(items: items)
        #expect(model.rows == ["Steve"])
        await Task.detached {
            for name in ["Tim", "Tony", "John"] { items.append(name) }
            try? items.set("Mark", at: 0)
        }.value
        #expect(await eventually { model.rows == ["Mark", "Tim", "Tony", "John"] })
        items.append("Craig")
        items.append("Phil")
        #expect(model.rows.count == 4)  // a later turn, not inside the appends
        #expect(await eventually { model.rows.count == 6 })
    }

    @Test("The coalesced sectioned view model: its sections at once, then another actor's changes")
    func coalescedSectionedViewModel() async throws {
        let inbox = ObservableSectionedArray<String, String>([
            ArraySection(metadata: "Today", items: ["Lunch"])
        ])
        let model = InboxViewModel(inbox: inbox)
        #expect(model.sections.map(\.items) == [["Lunch"]])
        await Task.detached {
            for title in ["Call", "Mail"] { try? inbox.appendItem(title, toSection: 0) }
            inbox.appendSection(ArraySection(metadata: "Later", items: ["Taxes"]))
        }.value
        #expect(await eventually { model.sections.map(\.items) == [["Lunch", "Call", "Mail"], ["Taxes"]] })
        try inbox.removeItem(at: ItemPath(section: 0, item: 0))
        #expect(model.sections[0].items.count == 3)  // a later turn, not inside the removal
        #expect(await eventually { model.sections[0].items == ["Call", "Mail"] })
    }

    @Test("A batch is one event with one merged changeset")
    func batch() throws {
        let queue = ObservableArray(["Steve", "Tim"])
        let batchToken = queue.observeValues { print($0.changeset) }  // inserts [0, 1]
        try queue.batch { b in
            b.append("Tony")
            try b.remove(at: 0)
        }  // one event: deletes [0], inserts [1]
        #expect(output.all == ["inserts [0, 1]", "deletes [0], inserts [1]"])
        #expect(queue.array == ["Tim", "Tony"])
        batchToken.cancel()
    }

    @Test("replace(with:) delivers a minimal diff; init(diffing:) follows a stream of arrays")
    func diffing() async {
        let numbers = ObservableArray([1, 2, 3])
        let diffToken = numbers.observeValues { print($0.changeset) }
        numbers.replace(with: [0, 1, 3, 4])  // deletes [1], inserts [0, 3]
        #expect(output.all == ["inserts [0, 1, 2]", "deletes [1], inserts [0, 3]"])
        diffToken.cancel()
        output.clear()

        let loaded = ObservableValue<[String]>(["a", "b"])
        let rows = ReadOnlyObservableArray(diffing: loaded)
        let rowsToken = rows.observeValues { print($0.changeset) }  // inserts [0, 1]
        loaded.set(["a", "c", "b"])  // inserts [1]
        #expect(output.all == ["inserts [0, 1]", "inserts [1]"])
        #expect(rows.array == ["a", "c", "b"])
        rowsToken.cancel()
        withExtendedLifetime(rows) {}
    }

    @Test("init(diffing:) follows a derived value: a list filtered by a query that changes")
    func diffingDerived() async {
        let fruits = ObservableArray(["apple", "banana", "avocado"])
        let query = ObservableValue("a")
        let matches = ReadOnlyObservableArray(
            diffing: fruits.combineLatest(query).map { fruits, query in
                fruits.array.filter { $0.hasPrefix(query) }
            })
        // First: ["apple", "avocado"] inserts [0, 1]
        let matchesToken = matches.observeValues { print($0.array, $0.changeset) }
        query.set("av")  // ["avocado"] deletes [0]
        fruits.append("avocado toast")  // ["avocado", "avocado toast"] inserts [1]
        #expect(matches.array == ["avocado", "avocado toast"])
        #expect(
            output.all == [
                #"["apple", "avocado"] inserts [0, 1]"#, #"["avocado"] deletes [0]"#,
                #"["avocado", "avocado toast"] inserts [1]"#,
            ])
        matchesToken.cancel()
    }

    @Test("map and filter follow their source with fine-grained changes")
    func derived() async {
        let people = ObservableArray(["Steve", "Tim"])
        let lengths = people.map { $0.count }
        let short = people.filter { $0.count <= 3 }
        let lengthsToken = lengths.observeValues { print("lengths", $0.array, $0.changeset) }
        let shortToken = short.observeValues { print("short", $0.array, $0.changeset) }

        people.append("Tony")  // lengths: [5, 3, 4], inserts [2]; short: ["Tim"], unchanged
        people.append("Al")  // lengths: [5, 3, 4, 2]; short: ["Tim", "Al"], inserts [1]
        _ = await eventually { output.all.count == 5 }
        // Each observer's changes in order (two observers' turns may interleave either way).
        #expect(
            output.all.filter { $0.hasPrefix("lengths") } == [
                "lengths [5, 3] inserts [0, 1]", "lengths [5, 3, 4] inserts [2]",
                "lengths [5, 3, 4, 2] inserts [3]",
            ])
        #expect(
            output.all.filter { $0.hasPrefix("short") } == [
                #"short ["Tim"] inserts [0]"#, #"short ["Tim", "Al"] inserts [1]"#,
            ])
        lengthsToken.cancel()
        shortToken.cancel()
        withExtendedLifetime((lengths, short)) {}
    }

    @Test("A sectioned array delivers section and item changes")
    func sections() throws {
        let table = ObservableSectionedArray<String, String>([
            ArraySection(metadata: "Cities", items: ["Paris", "Berlin"])
        ])
        let tableToken = table.observeValues { print($0.changeset) }  // sections: inserts [0]
        try table.appendItem("Copenhagen", toSection: 0)  // items in 0: inserts [2]
        table.appendSection(ArraySection(metadata: "Countries", items: ["France"]))  // sections: inserts [1]
        #expect(output.all == ["sections: inserts [0]", "items in 0: inserts [2]", "sections: inserts [1]"])
        tableToken.cancel()
    }
}
