import DailyQueue
import ObserverGraph

/// The live observer graph of a loaded queue, as text.
enum GraphExport {
    /// DOT (or Mermaid) for the manager, its items and everything observing them, followed by
    /// the snapshot's consistency report as comments.
    static func render(manager: QueueManager, mermaid: Bool) -> String {
        let snapshot = GraphSnapshot(observables: [manager] + manager.items, trackingObservers: [manager])
        let comment = mermaid ? "%% " : "// "
        let report = snapshot.report.split(separator: "\n").map { comment + $0 }.joined(separator: "\n")
        return (mermaid ? snapshot.mermaid : snapshot.dot) + "\n" + report
    }
}
