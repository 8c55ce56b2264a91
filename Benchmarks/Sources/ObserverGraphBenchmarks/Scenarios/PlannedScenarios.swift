// PLANNED SCENARIOS: places kept for measurements of kit features that do not exist yet.
//
// Nothing here runs and nothing here reports a number. When a feature lands, add its scenario
// as a file next to FanOut.swift (an enum with a `family` and a `run(plan:report:)`, measuring
// with `roundRobin` and reporting with `report.add`), list its family in Registry.families, add
// its sizes to Plan (full and smoke) and, if the brief gives it a target, a check in Targets.
// Then remove it from this list.
//
// None is planned now: the four that waited here (value set, AsyncSequence delivery, array
// append, diff) are ValueSet.swift, AsyncDelivery.swift, ArrayAppend.swift and Diff.swift.

/// The planned families, listed by `--list` so that nobody has to guess what is missing.
enum PlannedScenarios {
    static let descriptions: [(id: String, needs: String)] = []
}
