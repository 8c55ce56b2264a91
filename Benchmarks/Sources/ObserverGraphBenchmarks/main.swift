// ObserverGraph benchmarks: measures the kit next to hand-written loops and its peers
// (OpenCombine, NotificationCenter) in one run, prints a comparison table and the targets, and
// writes the results as JSON. Run it through `Benchmarks/run` (see Benchmarks/README.md).

import Foundation

runStart = monotonicNanoseconds()

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))

if options.listOnly {
    for family in Registry.families { print("\(family.id): \(family.summary)") }
    print("\(ActorDelivery.id): \(ActorDelivery.summary)")
    for planned in PlannedScenarios.descriptions {
        print("\(planned.id): PLANNED, not implemented: \(planned.needs)")
    }
    exit(0)
}

let knownFamilies = Set(Registry.families.map(\.id) + [ActorDelivery.id])
if let only = options.only, !only.isSubset(of: knownFamilies) {
    print(
        "error: unknown scenario family: \(only.subtracting(knownFamilies).sorted().joined(separator: ", "))")
    exit(2)
}

let plan = options.mode == .full ? Plan.full : Plan.smoke
let machine = Machine.current()
print(
    "ObserverGraph benchmarks, \(options.mode.rawValue) run on \(machine.arch), \(machine.cores) cores, \(machine.date)"
)
if machine.cores <= 2 {
    print(
        "note: \(machine.cores) cores; other work on the machine skews absolute times, ratios within this run hold better"
    )
}

let report = Report()
for family in Registry.families where options.only?.contains(family.id) ?? true {
    family.run(plan, report)
}
// Awaited at the top level, so the main actor is free to run deliveries while it waits.
if options.only?.contains(ActorDelivery.id) ?? true {
    await ActorDelivery.run(plan: plan, report: report)
}
report.computeRatios()
// Targets are judged on full runs only: a smoke run's sizes and samples say nothing about them.
if options.mode != .smoke { Targets.evaluate(report, plan: plan) }
progress("done")

print("")
if options.mode == .smoke {
    print("SMOKE RUN: few samples at small sizes; these numbers are not for comparison")
}
report.printTable()
report.printDerived()
report.printTargets()

if let path = options.jsonPath {
    do {
        try report.writeJSON(to: path, mode: options.mode, machine: machine, metadata: options.metadata)
        print("\nwrote \(path)")
    } catch {
        print("error: could not write \(path): \(error)")
        exit(1)
    }
}
