import DailyQueue
import Foundation
import ObserverGraph
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writers killed with `kill -9` at random moments never damage the store.
@Suite("daily-queue: writers killed at random moments")
struct KilledWriterTests {
    /// What one lane of the loop saw.
    struct Lane: Sendable {
        var completed = 0
        var midSave = 0
        var failures: [String] = []
        var final: StoredQueue?
    }

    @Test("kill -9 of a writer at random moments, 200 times: the store always holds the old or the new state")
    func killedWriters() throws {
        // Four lanes of 50 rounds run side by side, each on its own store, to keep the test fast
        // in slow builds (a sanitizer's process start-up dominates a round).
        let stores = try (0..<4).map { _ in try temporaryFolder().appendingPathComponent("queue.json").path }
        for store in stores {
            #expect(try DailyQueueCommand.run(["today", "Monday", "--store", store]).status == 0)
            #expect(try DailyQueueCommand.run(["add", "first", "--done", "--store", store]).status == 0)
        }
        // How long one `add` takes here (debug, release or sanitizer build) sets the first range of
        // kill moments; the range then adapts so that about half the writers finish, which puts
        // many kills around the save itself.
        let start = Date()
        #expect(try DailyQueueCommand.run(["add", "warm-up", "--done", "--store", stores[0]]).status == 0)
        let limit = max(Date().timeIntervalSince(start), 0.005) * 1.2
        let lanes = GraphLock<[Int: Lane]>([:])
        DispatchQueue.concurrentPerform(iterations: stores.count) { index in
            let lane = Self.loop(store: stores[index], lane: index, rounds: 50, limit: limit)
            lanes.withLock { $0[index] = lane }
        }
        let results = lanes.withLock { $0 }
        #expect(results.count == stores.count)
        for (index, store) in stores.enumerated() {
            let lane = try #require(results[index])
            #expect(lane.failures.isEmpty, "\(lane.failures)")
            // The lock of a killed process is never stale: the next writer goes straight through,
            // and cleans up the temporary files that killed writers left behind.
            let after = try DailyQueueCommand.run(
                ["add", "after", "--done", "--store", store], environment: ["DAILY_QUEUE_LOCK_TIMEOUT": "1"])
            #expect(after.status == 0, "\(after.err)")
            let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
            #expect(
                try !FileManager.default.contentsOfDirectory(atPath: folder).contains { $0.hasSuffix(".tmp") }
            )
            let final = try #require(try JSONFileQueueStore(url: URL(fileURLWithPath: store)).load())
            #expect(final.items.count == (lane.final?.items.count ?? -1) + 1)
        }
        let completed = results.values.map(\.completed).reduce(0, +)
        let midSave = results.values.map(\.midSave).reduce(0, +)
        print(
            "kill -9 loop: 200 rounds, \(completed) writes completed, \(200 - completed) killed before the "
                + "rename, \(midSave) of them mid-save (a temporary file left behind)")
    }

    /// `rounds` writers on `store`, each killed after a random pause; after each, the store must
    /// load and hold the state before the write or the state after it.
    static func loop(store: String, lane: Int, rounds: Int, limit initial: Double) -> Lane {
        var result = Lane()
        var limit = initial
        let url = URL(fileURLWithPath: store)
        let folder = url.deletingLastPathComponent().path
        guard var previous = try? JSONFileQueueStore(url: url).load() else {
            result.failures.append("lane \(lane): the store does not load before the first round")
            return result
        }
        for round in 0..<rounds {
            let title = "lane \(lane) round \(round)"
            guard let writer = try? Spawned(["add", title, "--done", "--store", store]) else {
                result.failures.append("\(title): the writer did not start")
                return result
            }
            try? writer.stdin.fileHandleForWriting.close()
            usleep(UInt32(Double.random(in: 0...limit) * 1_000_000))
            kill(writer.pid, SIGKILL)
            _ = writer.finish(timeout: 30)
            let now: StoredQueue
            do {
                now = try JSONFileQueueStore(url: url).load() ?? StoredQueue(currentDay: .sunday)
            } catch {
                result.failures.append("\(title): the store does not load: \(error)")
                return result
            }
            if now == previous {
                limit *= 1.05  // killed before the rename: the old state, exactly
            } else {
                limit *= 0.95
                var expected = previous
                expected.items.append(
                    StoredItem(
                        id: ItemID(previous.nextID), title: title, done: true, dayOfTheWeek: .monday,
                        queuePosition: previous.items.compactMap(\.queuePosition).count + 1))
                expected.nextID += 1
                guard now == expected else {
                    result.failures.append("\(title): neither the old nor the new state: \(now)")
                    return result
                }
                result.completed += 1
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            if names.contains(where: { $0.hasSuffix(".tmp") }) { result.midSave += 1 }
            previous = now
        }
        result.final = previous
        return result
    }
}
