import ObserverGraph
import Testing

@Suite("Observable arrays: a refused single mutation nested in a batch")
struct ObservableArrayNestedRefusalTests {
    @Test("Refused inside a batch of the same array: the same error on every run of the batch body")
    func sameErrorOnEveryRun() {
        let array = ObservableArray([1, 2])
        let log = ChangeLog<Int>()
        let token = array.observeValuesNonisolated(log.record)
        var refusals: [ObservableArrayError] = []
        var runs = 0
        array.batch { _ in
            runs += 1
            do throws(ObservableArrayError) { try array.insert(9, at: 7) } catch { refusals.append(error) }
            do throws(ObservableArrayError) { try array.move(from: 0, to: 4) } catch {
                refusals.append(error)
            }
            do throws(ObservableArrayError) { try array.set(5, at: 0) } catch { refusals.append(error) }
        }
        // The nested set is applied at once, so the batch body runs again on the new content;
        // each nested call is then replayed, refusals included, never applied twice.
        #expect(runs >= 2)
        let expected: [ObservableArrayError] = [
            .indexOutOfRange(index: 7, count: 2), .indexOutOfRange(index: 4, count: 2),
        ]
        #expect(refusals == Array(Array(repeating: expected, count: runs).joined()))
        #expect(array.array == [5, 2])
        #expect(log.changesets == [ArrayChangeset(inserts: [0, 1]), ArrayChangeset(updates: [0])])
        withExtendedLifetime(token) {}
    }
}
