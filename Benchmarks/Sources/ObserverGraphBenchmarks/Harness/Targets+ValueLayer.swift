// The value layer's targets: closure observers own their closures (their tokens give the
// lifetime), so an `ObservableValue` set is judged against a hand-written locked value with a
// closure array (the owning limit) and against OpenCombine's `CurrentValueSubject`; an observed
// `append` against a plain array with the same closures; `values()` against a hand-fed
// `AsyncStream`.

extension Targets {
    static let valueMaxRatioToOwningLimit = 1.3
    static let valueMaxRatioToOpenCombine = 0.5
    static let appendMaxRatioToHand = 2.0
    static let asyncMaxRatioToAsyncStream = 1.0
    static let lifecycleMaxRatioToOpenCombine = 1.0

    /// The life of a value (made, observed by one closure, released): ahead of OpenCombine's
    /// `CurrentValueSubject` with a `sink`; the hand-written value is shown beside it.
    static func evaluateLifecycle(_ report: Report, plan: Plan) {
        let scenario = ValueLifecycle.scenario(plan.lifecycleValues)
        let target =
            "value lifecycle K=\(sizeLabel(plan.lifecycleValues)): kit <= "
            + "\(formatRatio(lifecycleMaxRatioToOpenCombine)) CurrentValueSubject"
        guard let kit = report.median(scenario, ValueLifecycle.kit),
            let combine = report.median(scenario, ValueLifecycle.openCombine),
            let hand = report.median(scenario, ValueLifecycle.hand)
        else {
            report.addTarget(
                TargetRow(target: target, status: .notMeasured, measured: "no \(scenario) result"))
            return
        }
        report.addTarget(
            TargetRow(
                target: target, status: kit / combine <= lifecycleMaxRatioToOpenCombine ? .met : .missed,
                measured:
                    "kit \(formatValue(kit)) / \(formatValue(combine)) ns = \(formatRatio(kit / combine)); "
                    + "hand-written value \(formatValue(hand)) ns: kit \(formatRatio(kit / hand))"))
    }

    static func evaluateValueLayer(_ report: Report, plan: Plan) {
        for n in plan.valueSetSizes where n == 1 || n == 1_000 {
            let scenario = ValueSet.scenario(n)
            let combineTarget =
                "value set N=\(sizeLabel(n)): kit <= \(valueMaxRatioToOpenCombine)x CurrentValueSubject"
            let limitTarget =
                "value set N=\(sizeLabel(n)): kit <= \(valueMaxRatioToOwningLimit)x the owning limit"
            guard let kit = report.median(scenario, ValueSet.kitValue),
                let combine = report.median(scenario, ValueSet.openCombine),
                let limit = report.median(scenario, ValueSet.owningLimit)
            else {
                for target in [combineTarget, limitTarget] {
                    report.addTarget(
                        TargetRow(target: target, status: .notMeasured, measured: "no \(scenario) result"))
                }
                continue
            }
            report.addTarget(
                TargetRow(
                    target: combineTarget,
                    status: kit / combine <= valueMaxRatioToOpenCombine ? .met : .missed,
                    measured:
                        "kit \(formatValue(kit)) / \(formatValue(combine)) ns = \(formatRatio(kit / combine))"
                ))
            // What an exact `cancel()` costs at least: the same limit with an atomic gate per call.
            var gatedNote = ""
            if let gated = report.median(scenario, ValueSet.gatedLimit) {
                gatedNote =
                    "; with a gate per closure (the least an exact cancel() takes) \(formatValue(gated)) ns:"
                    + " kit \(formatRatio(kit / gated))"
            }
            report.addTarget(
                TargetRow(
                    target: limitTarget, status: kit / limit <= valueMaxRatioToOwningLimit ? .met : .missed,
                    measured:
                        "kit \(formatValue(kit)) / \(formatValue(limit)) ns = \(formatRatio(kit / limit))"
                        + gatedNote))
        }
        let append = ArrayAppend.scenario(plan.arrayAppends)
        let appendTarget = "array append, 10 observers: kit <= \(appendMaxRatioToHand)x array + closures"
        if let kit = report.median(append, ArrayAppend.kit),
            let hand = report.median(append, ArrayAppend.byHand)
        {
            var gatedNote = ""
            if let gated = report.median(append, ArrayAppend.gatedByHand) {
                gatedNote =
                    "; with a gate per closure (the least an exact cancel() takes) \(formatValue(gated)) ns:"
                    + " kit \(formatRatio(kit / gated))"
            }
            report.addTarget(
                TargetRow(
                    target: appendTarget, status: kit / hand <= appendMaxRatioToHand ? .met : .missed,
                    measured: "kit \(formatValue(kit)) / \(formatValue(hand)) ns = \(formatRatio(kit / hand))"
                        + gatedNote
                ))
        } else {
            report.addTarget(TargetRow(target: appendTarget, status: .notMeasured, measured: "not run"))
        }
        // The issue's "every mutation, not only append, on the fast path; the sectioned array
        // too": the same bound as append.
        let others: [(target: String, scenario: String, kit: String, hand: String)] = [
            (
                "array insert/set/remove/move, 10 observers: kit <= \(appendMaxRatioToHand)x array + closures",
                ArrayAppend.mutationsScenario(plan.arrayAppends / 4), ArrayAppend.mutationsKit,
                ArrayAppend.mutationsByHand
            ),
            (
                "sectioned append, 10 observers: kit <= \(appendMaxRatioToHand)x sections + closures",
                ArrayAppend.sectionedScenario(plan.arrayAppends), ArrayAppend.sectionedKit,
                ArrayAppend.sectionedByHand
            ),
        ]
        for row in others {
            guard let kit = report.median(row.scenario, row.kit),
                let hand = report.median(row.scenario, row.hand)
            else {
                report.addTarget(TargetRow(target: row.target, status: .notMeasured, measured: "not run"))
                continue
            }
            report.addTarget(
                TargetRow(
                    target: row.target, status: kit / hand <= appendMaxRatioToHand ? .met : .missed,
                    measured: "kit \(formatValue(kit)) / \(formatValue(hand)) ns = \(formatRatio(kit / hand))"
                ))
        }
        let async = AsyncDelivery.scenario(plan.asyncElements)
        let asyncTarget = "async values(): kit <= \(asyncMaxRatioToAsyncStream)x a hand-fed AsyncStream"
        if let kit = report.median(async, AsyncDelivery.kitChannel),
            let stream = report.median(async, AsyncDelivery.asyncStream)
        {
            report.addTarget(
                TargetRow(
                    target: asyncTarget, status: kit / stream <= asyncMaxRatioToAsyncStream ? .met : .missed,
                    measured:
                        "kit \(formatValue(kit)) / \(formatValue(stream)) ns = \(formatRatio(kit / stream))"))
        } else {
            report.addTarget(TargetRow(target: asyncTarget, status: .notMeasured, measured: "not run"))
        }
    }
}
