// Collects the results of a run, prints the comparison table and writes the JSON file.

import Foundation

/// One measured number: a scenario (the conditions), an implementation, and its median.
struct ResultRow: Codable {
    let scenario: String
    let implementation: String
    let median: Double
    let unit: String
    let min: Double
    let max: Double
    let samples: Int
    /// The row the other rows of the same scenario are divided by.
    let reference: Bool
    /// This row's median divided by the reference row's median (same scenario, same run).
    var ratioToReference: Double?
    let note: String?
}

/// A number computed from other rows: a scaling ratio (1M cost / 1k cost, 2 threads / 1).
struct DerivedRow: Codable {
    let name: String
    let implementation: String
    let value: Double
    let unit: String
    let detail: String
}

/// One target of the brief, judged on this run's medians.
struct TargetRow: Codable {
    enum Status: String, Codable {
        case met
        case missed
        case notMeasured = "not measured"
    }

    let target: String
    let status: Status
    let measured: String
}

final class Report {
    private(set) var rows: [ResultRow] = []
    private(set) var derived: [DerivedRow] = []
    private(set) var targets: [TargetRow] = []
    private var referenceOf: [String: String] = [:]

    func add(
        scenario: String, implementation: String, stats: Stats, unit: String,
        reference: Bool = false, note: String? = nil
    ) {
        if reference { referenceOf[scenario] = implementation }
        rows.append(
            ResultRow(
                scenario: scenario, implementation: implementation, median: stats.median, unit: unit,
                min: stats.min, max: stats.max, samples: stats.samples, reference: reference,
                ratioToReference: nil, note: note))
    }

    func addDerived(_ row: DerivedRow) { derived.append(row) }
    func addTarget(_ row: TargetRow) { targets.append(row) }

    func median(_ scenario: String, _ implementation: String) -> Double? {
        rows.first { $0.scenario == scenario && $0.implementation == implementation }?.median
    }

    func row(_ scenario: String, _ implementation: String) -> ResultRow? {
        rows.first { $0.scenario == scenario && $0.implementation == implementation }
    }

    /// Fills in every row's ratio to its scenario's reference row.
    func computeRatios() {
        for i in rows.indices {
            guard let name = referenceOf[rows[i].scenario],
                let reference = median(rows[i].scenario, name), reference > 0
            else { continue }
            rows[i].ratioToReference = rows[i].median / reference
        }
    }

    // MARK: Printing

    func printTable() {
        let header = ["scenario", "implementation", "median", "unit", "vs ref"]
        var lines: [[String]] = []
        var previousScenario = ""
        for row in rows {
            let ratio: String
            if row.reference {
                ratio = "ref"
            } else if let value = row.ratioToReference {
                ratio = formatRatio(value)
            } else {
                ratio = "-"
            }
            let scenario = row.scenario == previousScenario ? "" : row.scenario
            previousScenario = row.scenario
            lines.append([scenario, row.implementation, formatValue(row.median), row.unit, ratio])
        }
        printAligned(header: header, lines: lines, rightAligned: [2, 4])
    }

    func printDerived() {
        guard !derived.isEmpty else { return }
        print("\nderived (same run)")
        let lines = derived.map {
            [
                $0.name, $0.implementation,
                $0.unit == "x" ? formatRatio($0.value) : formatValue($0.value) + " " + $0.unit, $0.detail,
            ]
        }
        printAligned(header: ["measure", "implementation", "value", "from"], lines: lines, rightAligned: [2])
    }

    func printTargets() {
        guard !targets.isEmpty else { return }
        print("\ntargets")
        for target in targets {
            let mark: String
            switch target.status {
            case .met: mark = "[met]   "
            case .missed: mark = "[MISSED]"
            case .notMeasured: mark = "[n/a]   "
            }
            print("  \(mark) \(target.target): \(target.measured)")
        }
        let met = targets.filter { $0.status == .met }.count
        let missed = targets.filter { $0.status == .missed }.count
        print("  \(met) met, \(missed) missed, \(targets.count - met - missed) not measured")
    }

    private func printAligned(header: [String], lines: [[String]], rightAligned: Set<Int>) {
        var widths = header.map(\.count)
        for line in lines {
            for (column, cell) in line.enumerated() { widths[column] = Swift.max(widths[column], cell.count) }
        }
        func render(_ cells: [String]) -> String {
            var parts: [String] = []
            for (column, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                parts.append(rightAligned.contains(column) ? padding + cell : cell + padding)
            }
            var line = parts.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
        print(render(header))
        print(render(widths.map { String(repeating: "-", count: $0) }))
        for line in lines { print(render(line)) }
    }

    // MARK: JSON

    struct Document: Encodable {
        let schema: Int
        let date: String
        let mode: String
        let machine: Machine
        let metadata: [String: String]
        let results: [ResultRow]
        let derived: [DerivedRow]
        let targets: [TargetRow]
    }

    func writeJSON(to path: String, mode: RunMode, machine: Machine, metadata: [String: String]) throws {
        let document = Document(
            schema: 1, date: machine.date, mode: mode.rawValue, machine: machine, metadata: metadata,
            results: rows.map(Report.rounded), derived: derived.map(Report.rounded), targets: targets)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var data = try encoder.encode(document)
        data.append(contentsOf: Array("\n".utf8))
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }

    private static func rounded(_ row: ResultRow) -> ResultRow {
        ResultRow(
            scenario: row.scenario, implementation: row.implementation,
            median: significant(row.median), unit: row.unit, min: significant(row.min),
            max: significant(row.max), samples: row.samples, reference: row.reference,
            ratioToReference: row.ratioToReference.map(significant), note: row.note)
    }

    private static func rounded(_ row: DerivedRow) -> DerivedRow {
        DerivedRow(
            name: row.name, implementation: row.implementation, value: significant(row.value),
            unit: row.unit, detail: row.detail)
    }
}

/// Rounds to four significant digits, so that the JSON holds what the measurement can tell.
func significant(_ value: Double) -> Double {
    guard value != 0, value.isFinite else { return value }
    let magnitude = (log10(Swift.abs(value))).rounded(.down)
    let scale = pow(10, 3 - magnitude)
    return (value * scale).rounded() / scale
}

func formatValue(_ value: Double) -> String {
    let magnitude = Swift.abs(value)
    switch magnitude {
    case ..<10: return String(format: "%.2f", value)
    case ..<100: return String(format: "%.1f", value)
    case ..<100_000: return String(format: "%.0f", value)
    case ..<100_000_000: return String(format: "%.2fM", value / 1e6)
    default: return String(format: "%.2fG", value / 1e9)
    }
}

func formatRatio(_ value: Double) -> String {
    value >= 100 ? String(format: "%.0fx", value) : String(format: "%.2fx", value)
}
