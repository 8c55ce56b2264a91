// What the run ran on, recorded with the results.

import Foundation

struct Machine: Codable {
    /// `uname -m`.
    let arch: String
    /// Online processor count.
    let cores: Int
    let os: String
    /// When the run started, ISO 8601 in UTC.
    let date: String

    static func current() -> Machine {
        var name = utsname()
        uname(&name)
        let arch = withUnsafeBytes(of: &name.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let system = withUnsafeBytes(of: &name.sysname) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return Machine(
            arch: arch, cores: ProcessInfo.processInfo.activeProcessorCount, os: system,
            date: formatter.string(from: Date()))
    }
}
