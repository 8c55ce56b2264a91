import DailyQueue
import ObserverGraph
import ObserverGraphTesting

/// `daily-queue` with no arguments: the source document's scenarios, played on one fresh
/// in-memory queue. Every row of every diagram is recorded from real observer callbacks, one
/// column per step of a virtual clock.
struct Demo {
    let out: (String) -> Void

    func run() {
        do {
            try play()
        } catch {
            out("the demo failed: \(error)")
        }
    }

    private func play() throws {
        let manager = try QueueManager(store: InMemoryQueueStore(), startDay: .tuesday)
        out(
            """
            daily-queue demo: four short scenarios on a fresh in-memory queue (no file is touched).

            The queue holds the items that are done and due today; here today is Tuesday (day 2;
            Monday is 1). The queue manager observes every item it holds. When an item stops
            qualifying (it is no longer done, or its day changes), the manager takes it out of the
            queue and stops observing it. The item stays stored, and comes back if it qualifies again.

            How to read a diagram: time runs left to right, one column per step of a virtual clock
            (each column as wide as its widest mark). Each row is what one observer saw, recorded
            from the real callbacks:
              add, enter, move   an item was stored / joined the queue / moved within it
              remove             an item left the queue (it stays stored)
              subscribe          the manager starts (O, or [+x]) or stops (!, or [-x]) observing an item
              currentDay         the day the queue is for changed (3 = Wednesday)
              queue              the queue's items after the step: [a,b]; [] is empty
              item.Done          the item's done value: T is true, F is false
              item.DayOfTheWeek  the item's day number
              changeset          what the queue's observers were told, by index: +i inserted at i,
                                 -i deleted from i, f→t moved from f to t; = is the first, empty view
            Marks: - nothing at this step; O an event; [x] a mark longer than one character;
            (ab) several marks at one step; > the recording goes on.

            """)

        // 1. Add itemA, the manager subscribes; done goes true → false; itemA leaves the queue.
        let itemA = try scenario(
            "1. itemA: done becomes false", manager: manager,
            steps: [
                (1, { _ = try manager.add(title: "itemA", done: true) }),
                (4, { try manager.setDone(ItemID(1), false) }),
            ], item: ItemID(1), watching: .done)
        if let itemA {
            out(
                "   manager subscribed to itemA now: \(manager.isSubscribed(to: itemA)); itemA still stored: yes\n"
            )
        }

        // 2. The day-of-week case: queueManager.currentDay = 2, itemB's day becomes 3.
        let itemB = try scenario(
            "2. itemB: its day changes from Tuesday (2) to Wednesday (3): no longer due today",
            manager: manager,
            steps: [
                (1, { _ = try manager.add(title: "itemB", done: true) }),
                (4, { try manager.setDay(ItemID(2), .wednesday) }),
            ], item: ItemID(2), watching: .dayOfTheWeek)
        if let itemB { out("   manager subscribed to itemB now: \(manager.isSubscribed(to: itemB))\n") }

        // 3. A reorder: a move in the changeset.
        try scenario(
            "3. reorder: Taxes moves to the front", manager: manager,
            steps: [
                (1, { _ = try manager.add(title: "Dishes", done: true) }),
                (2, { _ = try manager.add(title: "Groceries", done: true) }),
                (3, { _ = try manager.add(title: "Taxes", done: true) }),
                (5, { try manager.move(ItemID(5), to: 1) }),
            ])
        out("")

        // 4. The day rolls over to Wednesday: one change; itemB (now due Wednesday) comes back.
        try scenario(
            "4. the day rolls over to Wednesday", manager: manager,
            steps: [
                (1, { _ = try manager.add(title: "Gym", day: .wednesday, done: true) }),
                (3, { try manager.setCurrentDay(.wednesday) }),
            ])

        out("The final queue:")
        out(Table.render(manager, all: false))
        out("")
        out(Table.render(manager, all: true))
    }

    /// Which property of the scenario's item gets a row of its own.
    enum Watched {
        case done, dayOfTheWeek
    }

    /// Plays `steps` on a virtual clock while recorders listen, then prints the diagram: the
    /// manager's reports (one row each), the watched item property, the queue and its changesets.
    @discardableResult
    private func scenario(
        _ title: String, manager: QueueManager, steps: [(Int, () throws -> Void)],
        item itemID: ItemID? = nil, watching watched: Watched? = nil
    ) throws -> QueueItem? {
        let clock = VirtualClock()
        let queue = RecordingObserver<ArrayChange<QueueItem>>(clock: clock, name: "queue")
        queue.record(manager.queue)
        let tap = Tap(clock: clock, single: watched != nil)
        manager.addObserver(tap)
        var itemRow: (() -> MarbleRow)?
        var cancel: [() -> Void] = [queue.cancel]
        var failure: (any Error)?
        for (step, action) in steps {
            clock.schedule(at: step) {
                do { try action() } catch { failure = failure ?? error }
                // Once the item exists, record its watched property from then on.
                guard itemRow == nil, let itemID, let item = manager.item(itemID), let watched else { return }
                switch watched {
                case .done:
                    let recorder = RecordingObserver<Bool>(clock: clock, name: "item.Done")
                    recorder.record(item.done)
                    itemRow = { recorder.marbleRow { $0 ? "T" : "F" } }
                    cancel.append(recorder.cancel)
                case .dayOfTheWeek:
                    let recorder = RecordingObserver<Weekday>(clock: clock, name: "item.DayOfTheWeek")
                    recorder.record(item.dayOfTheWeek)
                    itemRow = { recorder.marbleRow { "\($0.rawValue)" } }
                    cancel.append(recorder.cancel)
                }
            }
        }
        clock.run()
        clock.advance(by: 1)
        manager.removeObserver(tap)
        defer { for stop in cancel { stop() } }
        if let failure { throw failure }
        let tapRows = tap.rows()
        var rows = tapRows.before
        rows.append(queue.marbleRow(label: "queue") { $0.array.map(\.title).joined(separator: ",") })
        if let itemRow { rows.append(itemRow()) }
        rows += tapRows.after
        rows.append(queue.marbleRow(label: "changeset") { Self.compact($0.changeset) })
        out(title)
        out(MarbleDiagram(rows).text.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
        return itemID.flatMap(manager.item)
    }

    /// `+2` insert, `-1` delete, `~0` update, `2→0` move.
    static func compact(_ changeset: ArrayChangeset) -> String {
        let parts =
            changeset.deletes.map { "-\($0)" } + changeset.inserts.map { "+\($0)" }
            + changeset.updates.map { "~\($0)" } + changeset.moves.map { "\($0.from)→\($0.to)" }
        return parts.isEmpty ? "=" : parts.joined(separator: ",")
    }
}

/// Listens to the manager and records, at the clock's step, what it reports: one row per kind
/// of report, in the order of the source document's diagrams.
final class Tap: GraphObserver, QueueManagerObserver {
    let clock: VirtualClock
    /// With one item, rows are named after it and marked `O` (as in the source document);
    /// with several, each mark is the item's title.
    let single: Bool
    private var marks: [(kind: Kind, title: String, step: Int, symbol: String)] = []

    enum Kind: Int {
        case add, enter, subscribe, currentDay, move, remove
    }

    init(clock: VirtualClock, single: Bool) {
        self.clock = clock
        self.single = single
    }

    func queueManager(_ manager: QueueManager, didReport event: QueueEvent) {
        switch event {
        case .added(let item, _), .stored(let item, _): mark(.add, item.title)
        case .entered(let item, _, _): mark(.enter, item.title)
        case .left(let item, _, _), .deleted(let item, _): mark(.remove, item.title)
        case .moved(let item, _, _): mark(.move, item.title)
        case .dayChanged(_, let day): marks.append((.currentDay, "", clock.now, "\(day.rawValue)"))
        case .changed: break
        }
    }

    func queueManager(_ manager: QueueManager, didSubscribe subscribed: Bool, to item: QueueItem) {
        let symbol = single ? (subscribed ? "O" : "X") : (subscribed ? "+" : "-") + item.title
        marks.append((.subscribe, item.title, clock.now, symbol))
    }

    private func mark(_ kind: Kind, _ title: String) {
        marks.append((kind, title, clock.now, single ? "O" : title))
    }

    /// The rows that come before the item and queue rows, and the ones that come after.
    func rows() -> (before: [MarbleRow], after: [MarbleRow]) {
        let names: [Kind: String] = [
            .add: "add", .enter: "enter", .subscribe: "subscribe", .currentDay: "currentDay", .move: "move",
            .remove: "remove",
        ]
        var before: [MarbleRow] = []
        var after: [MarbleRow] = []
        for kind in [Kind.add, .enter, .subscribe, .currentDay, .move, .remove] {
            let kindMarks = marks.filter { $0.kind == kind }
            guard let first = kindMarks.first else { continue }
            var label = names[kind]!
            if single && kind != .currentDay { label += kind == .subscribe ? "()" : "(\(first.title))" }
            let row = MarbleRow(
                label: label, length: clock.now + 1,
                events: kindMarks.map {
                    MarbleEvent($0.symbol == "X" ? .unsubscribed : .value($0.symbol), at: $0.step)
                })
            if kind.rawValue < Kind.move.rawValue { before.append(row) } else { after.append(row) }
        }
        return (before, after)
    }
}
