// PLANNED SCENARIOS: places kept for measurements of kit features that do not exist yet.
//
// Nothing here runs and nothing here reports a number. When a feature lands, add its scenario
// as a file next to FanOut.swift (an enum with a `family` and a `run(plan:report:)`, measuring
// with `roundRobin` and reporting with `report.add`), list its family in Registry.families, add
// its sizes to Plan (full and smoke) and, if the brief gives it a target, a check in Targets.
//
// 1. Observable value set (needs the kit's typed observable value):
//    setting a value observed by N observers, next to OpenCombine's
//    `CurrentValueSubject<Int, Never>.send` with N sinks; unit ns per delivery; reference:
//    the kit's own broadcast at the same N (the price of the value layer).
//
// 2. AsyncSequence delivery (needs the kit's async bridge):
//    values pushed through the kit's AsyncSequence to one consuming task, next to an
//    `AsyncStream` fed by hand and OpenCombine's `.values`; unit ns per element.
//
// 3. Observable array append with 10 observers (needs the kit's observable arrays):
//    appending one element to an observable array observed by 10 observers, each receiving the
//    changeset; unit ns per append; reference: a plain array append plus a 10-closure loop.
//
// 4. Diff of 10,000 elements with 1% changed (needs the kit's diffing):
//    computing the changeset between two 10,000-element arrays that differ in 100 elements;
//    unit µs per diff; reference: the standard library's `difference(from:)`.

/// The planned families, listed by `--list` so that nobody has to guess what is missing.
enum PlannedScenarios {
    static let descriptions: [(id: String, needs: String)] = [
        (
            "valueset",
            "observable value set vs OpenCombine CurrentValueSubject.send (needs the typed observable value)"
        ),
        ("async", "AsyncSequence delivery (needs the async bridge)"),
        ("arrayappend", "observable array append with 10 observers (needs observable arrays)"),
        ("diff", "diff of 10,000 elements with 1% changed (needs diffing)"),
    ]
}
