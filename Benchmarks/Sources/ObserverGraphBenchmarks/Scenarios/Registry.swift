// The scenario families a run goes through, in order. A new scenario is one file in Scenarios/
// with a `family` value, plus one line here (PlannedScenarios.swift describes the steps, and
// lists the scenarios still waiting on kit features).

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct ScenarioFamily: Sendable {
    /// The name `--only` selects it by.
    let id: String
    let summary: String
    let run: @Sendable (Plan, Report) -> Void
}

enum Registry {
    static let families: [ScenarioFamily] = [
        FanOut.family,
        Churn.family,
        Lookup.family,
        Memory.family,
        Contention.family,
        ValueSet.family,
        AsyncDelivery.family,
        ArrayAppend.family,
        Diff.family,
        DerivedAppend.family,
        SectionedDiff.family,
        OperatorChain.family,
        ValueLifecycle.family,
    ]
}

/// Prints what is being measured now, so that a long run shows its progress.
func progress(_ what: String) {
    let seconds = Double(monotonicNanoseconds() - runStart) / 1e9
    print(String(format: "[%6.1fs] ", seconds) + what)
    fflush(nil)  // show progress at once, also when the output goes to a pipe
}

/// When the run started, for the progress lines.
nonisolated(unsafe) var runStart: UInt64 = 0
