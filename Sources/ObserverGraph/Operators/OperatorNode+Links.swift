// What an operator node holds under its lock: its edges, latest value, terminal event, outbox.

/// What an edge runs for each event: the child's operator; its last argument is `direct`.
@usableFromInline
final class _EdgeCall<Value: Sendable>: Sendable {
    @usableFromInline let call: @Sendable (GraphEvent<Value>, _Pass?, Bool) -> Void

    init(_ call: @escaping @Sendable (GraphEvent<Value>, _Pass?, Bool) -> Void) {
        self.call = call
    }
}

/// One edge of a node: its id and what it runs for each event (a struct, not a labeled tuple,
/// whose metadata unspecialized code would look up by its labels).
///
/// What it runs is held without reference counting, so that emitting along an edge counts no
/// reference: retained when the edge is made (`_OperatorNode.connect`), released by the node's
/// deinit, or, once removed (`disconnect`), when the passes of the component running then have
/// ended (`_PropagationDomain.releaseAfterPasses`). Edges are called only inside passes (a node being
/// built, whose events carry no pass, has no edge yet), so a pass that read an edge before its
/// removal still finds what it runs.
@usableFromInline
struct _Edge<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let id: UInt64
    /// Runs the child's operator for an event (see above).
    @usableFromInline let target: Unmanaged<_EdgeCall<Value>>
    /// The child is built, so the event goes straight to its operator; until then the child
    /// checks, under its lock, whether to hand the event to its builder.
    @usableFromInline var direct: Bool
    /// The epoch of the component when the edge was made: a pass that began before a merge
    /// gave the component a newer one queues what it sends along the edge (see `emit`).
    @usableFromInline let epoch: UInt64

    @usableFromInline
    init(
        id: UInt64, call: @escaping @Sendable (GraphEvent<Value>, _Pass?, Bool) -> Void, direct: Bool,
        epoch: UInt64
    ) {
        self.id = id
        self.target = .passRetained(_EdgeCall(call))
        self.direct = direct
        self.epoch = epoch
    }
}

/// A node's edges, in the order they were made: the first apart, so that emitting along the
/// usual single edge copies one closure reference and no array.
@usableFromInline
struct _EdgeList<Value: Sendable> {
    /// `nil` only when there is no edge at all.
    @usableFromInline var first: _Edge<Value>?
    @usableFromInline var more: [_Edge<Value>] = []

    @inlinable init() {}

    mutating func append(_ edge: _Edge<Value>) {
        if first == nil { first = edge } else { more.append(edge) }
    }

    /// Marks the edge `id` direct (see `_Edge.direct`).
    mutating func makeDirect(_ id: UInt64) {
        if var edge = first, edge.id == id {
            edge.direct = true
            first = edge
        } else if let index = more.firstIndex(where: { $0.id == id }) {
            more[index].direct = true
        }
    }

    /// No edge at all.
    var isEmpty: Bool { first == nil }

    /// Every edge, in order.
    var all: [_Edge<Value>] { (first.map { [$0] } ?? []) + more }

    /// Removes the edge `id` and returns it; `nil` when there is none.
    mutating func remove(_ id: UInt64) -> _Edge<Value>? {
        if let edge = first, edge.id == id {
            first = more.isEmpty ? nil : more.removeFirst()
            return edge
        }
        guard let index = more.firstIndex(where: { $0.id == id }) else { return nil }
        return more.remove(at: index)
    }
}

/// What a node holds under its lock.
@usableFromInline
struct _NodeLinks<Value: Sendable> {
    @usableFromInline var latest: Value?
    @usableFromInline var terminal: GraphEvent<Value>?
    @usableFromInline var edges = _EdgeList<Value>()
    @usableFromInline var nextEdge: UInt64 = 0
    /// Being built: work that arrives is buffered for the builder.
    @usableFromInline var building: Bool
    @usableFromInline var buffered: [@Sendable (_Pass?) -> Void] = []
    /// Built, but the builder left the work that arrived during its last batch to the
    /// component's passes (see `_OperatorNode.finishBuilding`): what arrives is buffered behind
    /// it, and the first pass to reach the node runs it all, in order.
    @usableFromInline var handingOff = false
    /// The parents' edges to make direct once the work handed off has run.
    var flipsAfterHandOff: [@Sendable () -> Void] = []
    /// Whether the derived value was ever observed: until then, it does not publish.
    @usableFromInline var observed = false
    @usableFromInline var outbox = _Outbox<Value>()
    /// Removes this node's edges from its parents (see `_OperatorNode.detachAll`).
    @usableFromInline var detach: [@Sendable () -> Void] = []
    /// The owning derived value is gone (`detachAll` ran).
    @usableFromInline var released = false
    /// A source's input only: the edges promised by callers of `_OperatorNode.input(of:)` that
    /// have not connected yet (each connects once), and whether the input was retired (it lost
    /// its last edge with none promised: its source makes a new one for the next operator).
    var promised = 0
    var retired = false

    @usableFromInline init(latest: Value?, terminal: GraphEvent<Value>?, building: Bool) {
        self.latest = latest
        self.terminal = terminal
        self.building = building
    }

    /// Retires a source's input left with no edge and none promised; `true` the first time.
    mutating func retireIfIdle() -> Bool {
        guard edges.isEmpty, promised == 0, !retired else { return false }
        retired = true
        return true
    }
}

/// What a new operator node needs of its inputs, whatever their value types.
@usableFromInline
protocol _OperatorInput: AnyObject, Sendable {
    var rank: Int { get }
    var domain: _PropagationDomain { get }
    /// See `_OperatorNode.withdrawPromise()`.
    func withdrawPromise()
}

extension _OperatorNode: _OperatorInput {}
