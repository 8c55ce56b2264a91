import ObserverGraph
import Testing

/// A derived value nobody observes does not publish (its observers' queue is skipped); these
/// tests check that a first observer arriving late still sees exactly what an observer of the
/// same chain saw from the start would have been replayed, and everything after.
@Suite("Operators: a derived value observed late")
struct OperatorLateObserverTests {
    @Test("An inner link observed late: its value is current, the observer gets it, then what follows")
    func innerLinkObservedLate() {
        let x = ObservableValue(1)
        let tens = x.map { $0 * 10 }
        let end = tens.map { $0 + 1 }
        let endRecorder = OperatorRecorder(end)
        x.value = 2
        x.value = 3
        #expect(tens.value == 30)
        let tensRecorder = OperatorRecorder(tens)
        x.value = 4
        #expect(tensRecorder.values == [30, 40])
        #expect(endRecorder.values == [11, 21, 31, 41])
        withExtendedLifetime((tens, end)) {}
    }

    @Test("A chain observed late sees what a chain observed from the start replays: values and the end")
    func lateMatchesEarly() {
        func chain(_ x: ObservableValue<Int>) -> DerivedValue<Int> {
            x.map { $0 * 3 }.filter { $0 % 2 == 0 }.removeDuplicates()
        }
        let x = ObservableValue(0)
        let early = chain(x)
        let late = chain(x)
        let earlyRecorder = OperatorRecorder(early)
        for value in [1, 2, 2, 4, 5] { x.value = value }
        let earlyLate = OperatorRecorder(early)
        let lateRecorder = OperatorRecorder(late)
        #expect(earlyRecorder.values == [0, 6, 12])
        #expect(earlyLate.events == [.value(12)])
        #expect(lateRecorder.events == [.value(12)])
        x.value = 6
        x.finish()
        #expect(earlyLate.events == [.value(12), .value(18), .finished])
        #expect(lateRecorder.events == earlyLate.events)
        let afterEnd = OperatorRecorder(late)
        let afterEndEarly = OperatorRecorder(early)
        #expect(afterEnd.events == afterEndEarly.events)
        #expect(late.terminalEvent == .finished && early.terminalEvent == .finished)
    }

    @Test("A failure reached while nobody observed is what a late observer gets, as with an early one")
    func failureWhileUnobserved() {
        let x = ObservableValue(1)
        let early = x.map { $0 * 2 }
        let late = x.map { $0 * 2 }
        let earlyRecorder = OperatorRecorder(early)
        x.value = 2
        x.fail(OperatorFailure())
        #expect(earlyRecorder.events == [.value(2), .value(4), .failed(OperatorFailure())])
        #expect(late.terminalEvent == .failed(OperatorFailure()))
        let lateRecorder = OperatorRecorder(late)
        #expect(lateRecorder.events == OperatorRecorder(early).events)
        #expect(lateRecorder.events.last == .failed(OperatorFailure()))
    }
}
