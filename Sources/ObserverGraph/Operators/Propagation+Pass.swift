/// A node a pass can mark (`_OperatorNode`).
@usableFromInline
protocol _Markable: AnyObject {
    var isMarked: Bool { get set }
    /// Runs what the node does once per pass when marked (see `_Pass.mark`).
    func runMarked(_ pass: _Pass)
}

extension _OperatorNode: _Markable {}

/// One propagation pass: what one source change does to the derived nodes, before anything is
/// delivered. Used only by the thread running it.
///
/// Single-input operators handle an event as soon as their parent emits it. A node with several
/// inputs (`combineLatest`) is only marked: marked nodes run in rank order once every node of
/// lower rank is done, so each sees all of this change's inputs at once, and runs once. Then every
/// node that emitted delivers its events to its observers, in the order the nodes first emitted.
///
/// Not final only so that `_DomainGate` can be one; every member is final.
@usableFromInline
class _Pass {
    /// A marked node and its rank (the node knows what to run: `_Markable.runMarked`, so marking
    /// allocates nothing).
    typealias Mark = (rank: Int, node: any _Markable)

    /// Marked nodes not run yet, in the order they were marked; each runs once per pass (a node's
    /// `isMarked` says it is here). (Exclusivity is unchecked on the pass's state: only the
    /// thread running the pass uses it, one call at a time.)
    @exclusivity(unchecked) private final var marked: [Mark] = []
    /// The marks being run (kept to reuse its storage).
    @exclusivity(unchecked) private final var running: [Mark] = []
    /// What delivers the events of each node that emitted some for its observers (its
    /// `publish`), in the order the nodes first emitted.
    @exclusivity(unchecked) @usableFromInline final var touched: [_Publication] = []
    /// What runs once the pass has delivered (`whenDelivered`).
    @exclusivity(unchecked) private final var afterDelivery: [() -> Void] = []
    /// What this pass sends along edges a merge made since it began, and their component: run
    /// together in one pass of their own, queued ahead of the component's other jobs (so a node
    /// joined by the merge still sees all of this change's inputs at once, and before any change
    /// that arrived after it).
    @exclusivity(unchecked) private final var acrossMerge: [@Sendable (_Pass) -> Void] = []
    @exclusivity(unchecked) private final var acrossMergeDomain: _PropagationDomain?
    /// Set while an event crosses an edge a merge made since this pass began: the component
    /// where `accept` queues it, unless the child is still being built.
    @exclusivity(unchecked) @usableFromInline final var crossing: _PropagationDomain?
    /// The epoch of the component when the pass began: an edge with a newer one was made by a
    /// merge since, and what goes along it is queued (see `_PropagationDomain`).
    @exclusivity(unchecked) @usableFromInline final var epoch: UInt64 = 0

    @usableFromInline init() {}

    /// Runs `node`'s marked work (`_OperatorNode.markedWork`) once, after every node of a lower
    /// rank: nothing when the node is marked already. A node marked again after it ran (an input
    /// of a higher rank emitted into it, which only a switching operator can cause) runs again.
    @inlinable
    final func mark<Value>(_ node: _OperatorNode<Value>) {
        guard !node.isMarked else { return }
        node.isMarked = true
        append(node, rank: node.rank)
    }

    @usableFromInline
    final func append(_ node: any _Markable, rank: Int) {
        marked.append((rank, node))
    }

    /// Queues `work` (an event crossing an edge a merge made since this pass began) for a pass
    /// of `domain`'s component ahead of its queued jobs, with the other such events of this pass.
    @usableFromInline
    final func queueAcrossMerge(_ domain: _PropagationDomain, _ work: @escaping @Sendable (_Pass) -> Void) {
        acrossMerge.append(work)
        acrossMergeDomain = domain
    }

    /// Runs `work` after this pass has delivered to the observers of derived values.
    final func whenDelivered(_ work: @escaping () -> Void) {
        afterDelivery.append(work)
    }

    @usableFromInline
    final func run() {
        // Runs the marks of the lowest rank, in marking order; the others wait, and marks made
        // meanwhile queue behind them. A single mark (a diamond's one join) is taken out as is.
        while !marked.isEmpty {
            if marked.count == 1 {
                let mark = marked.removeLast()
                mark.node.isMarked = false
                mark.node.runMarked(self)
                continue
            }
            let lowest = marked.lazy.map(\.rank).min() ?? 0
            swap(&marked, &running)
            for mark in running where mark.rank != lowest { marked.append(mark) }
            for mark in running where mark.rank == lowest {
                mark.node.isMarked = false
                mark.node.runMarked(self)
            }
            running.removeAll(keepingCapacity: true)
        }
        // Nothing is added to `touched` while its nodes publish: a change made by an observer is
        // queued as a job of its own, which runs after this pass.
        if touched.count == 1 {
            // Usually one node published: taken out, with no copy of the list or the entry.
            let publication = touched.removeLast()
            publication.publish(publication.node)
        } else if !touched.isEmpty {
            for publication in touched { publication.publish(publication.node) }
            touched.removeAll(keepingCapacity: true)
        }
        if let domain = acrossMergeDomain {
            let crossing = acrossMerge
            acrossMerge = []
            acrossMergeDomain = nil
            domain.submit(first: true) { pass in
                for work in crossing { work(pass) }
            }
        }
        guard !afterDelivery.isEmpty else { return }
        let after = afterDelivery
        afterDelivery.removeAll()
        for work in after { work() }
    }
}

/// A node that emitted in a pass, and what delivers its events: its `publish`, as a closure that
/// captures nothing (so listing it allocates nothing), given the node.
@usableFromInline
struct _Publication {
    @usableFromInline let node: AnyObject
    @usableFromInline let publish: (AnyObject) -> Void

    @inlinable
    init(_ node: AnyObject, _ publish: @escaping (AnyObject) -> Void) {
        self.node = node
        self.publish = publish
    }
}
