/// A picture of the subscription graph: who observes whom, taken as one consistent cut.
///
///     let snapshot = GraphSnapshot(observables: [wallet])
///     print(snapshot.dot)        // Graphviz
///     print(snapshot.mermaid)    // Mermaid (renders on GitHub)
///     print(snapshot.report)     // one-sided edges, dangling entries, observers held by value
///
/// **Nodes** are the observables and observers reachable from the roots you pass, each with its
/// `graphDisplayName`. **Edges** are subscriptions, drawn from the observable to the observer
/// (the way events flow).
///
/// **Discovery and consistency.** Starting from the roots, the snapshot follows edges in both
/// directions: an observable's observers, and a tracking observer's subscriptions. It reads each
/// node on its own first, to discover what is reachable. Then it locks all discovered nodes at
/// once, in address order (the order `GraphNode.consistencyViolations(among:)` uses), and reads
/// their state and every entry's object under those locks: that is the cut. Still under the
/// locks, it carries out every object it found. After unlocking, it checks that the cut is
/// closed: no entry leads to an observable or tracking observer outside the locked set. If one
/// does (the graph grew meanwhile), it adds the newcomers and takes the cut again. Plain
/// observers have no node, so they never force a retry. Every object the snapshot meets is held
/// strongly until it is done, so no address is reused in between; the objects are released
/// afterwards, with no lock held. A graph that keeps gaining new observables or tracking
/// observers reachable from the roots faster than a cut takes can make it retry for as long as
/// that lasts.
///
/// **What the report says.** See `oneSidedEdges`, `danglingEntries`, `valueObservers` and
/// `violations`. Only one-sided edges and violations make the graph inconsistent
/// (`isConsistent`); the other two describe ownership.
///
/// Thread safety: a `Sendable` value. Taking one is safe from any thread while other threads
/// change the graph.
public struct GraphSnapshot: Sendable, Equatable {
    /// What a node is in the graph; an object can have several roles.
    ///
    /// Thread safety: a value type. Callbacks: none.
    /// - Complexity: O(1) for every operation.
    public struct Roles: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: Int

        /// Creates roles from their bits.
        ///
        /// Thread safety: pure. Callbacks: none.
        /// - Complexity: O(1).
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A `GraphObservable`: it has observers.
        public static let observable = Roles(rawValue: 1)
        /// A `GraphObserver`: it can be subscribed.
        public static let observer = Roles(rawValue: 2)
        /// A `GraphTrackingObserver`: it lists its subscriptions too.
        public static let tracking = Roles(rawValue: 4)
        /// A struct observer: the graph holds it by value (see `GraphSnapshot.valueObservers`).
        public static let heldByValue = Roles(rawValue: 8)
    }

    /// An observable or an observer.
    ///
    /// Thread safety: a value type. Callbacks: none.
    /// - Complexity: O(1) for every operation but hashing and comparison (O(name length)).
    public struct Node: Sendable, Hashable {
        /// Its `graphDisplayName` when the snapshot was taken.
        public let name: String
        /// What it is.
        public let roles: Roles
    }

    /// A subscription: `observer` is subscribed to `observable` (indices into `nodes`).
    ///
    /// Thread safety: a value type. Callbacks: none.
    /// - Complexity: O(1) for every operation.
    public struct Edge: Sendable, Hashable {
        /// The index of the observable in `nodes`.
        public let observable: Int
        /// The index of the observer in `nodes`.
        public let observer: Int
        /// Whether the observer is a tracking observer, so that both sides record the edge.
        public let isTracked: Bool
        /// Whether only one side records a tracked edge: the kit guarantees this never happens.
        public let isOneSided: Bool
    }

    /// An entry whose object was deallocated but is still listed (see `danglingEntries`).
    ///
    /// Thread safety: a value type. Callbacks: none.
    /// - Complexity: O(1) for every operation.
    public struct DanglingEntry: Sendable, Hashable {
        /// The index in `nodes` of the node that lists the entry.
        public let holder: Int
        /// `true` if it is in the holder's subscriptions, `false` if in its observers.
        public let inSubscriptions: Bool
    }

    /// A struct observer, which the graph holds by value, and the objects it keeps alive.
    ///
    /// Thread safety: a value type. Callbacks: none.
    /// - Complexity: O(1) for every operation but hashing and comparison (O(size)).
    public struct ValueObserver: Sendable, Hashable {
        /// The index of the struct observer in `nodes`.
        public let observer: Int
        /// The objects its stored properties hold (found by reflection), as `Type@abcd`, or as the
        /// node's name when the object is in the snapshot.
        public let ownedObjects: [String]
        /// The indices in `nodes` of owned objects that are in the snapshot. An observable listed
        /// here that also holds this observer is a retain cycle: neither is ever released.
        public let ownedNodes: [Int]
    }

    /// The observables and observers, in discovery order: the roots first, then breadth first,
    /// each node's observers before its subscriptions, in registration order.
    public let nodes: [Node]
    /// The subscriptions, grouped by observable in node order, each group in registration order.
    /// Edges that only a tracking observer records come last.
    public let edges: [Edge]
    /// Entries whose object has been deallocated. They are harmless: the kit prunes an observer
    /// entry lazily (on a broadcast, or when the list grows), and an edge of a deallocated
    /// tracking observer or observable is removed when its node goes, which can lag behind for
    /// a moment.
    public let danglingEntries: [DanglingEntry]
    /// Every struct observer in the snapshot, with the objects it keeps alive.
    ///
    /// This is the kit's honest answer to "observers kept alive only by the graph". Class
    /// observers are held weakly, so the graph never keeps one alive. A struct observer is
    /// stored by value: the observable holds the only copy of it, so it lives exactly as long as
    /// its subscription, and so does every object its stored properties hold. Whether anything
    /// else also holds those objects cannot be known without reference counts, so they are
    /// listed as kept alive by the graph, not as kept alive only by it. Reflection finds objects
    /// held directly or through structs, enums, tuples, optionals and collections (a bounded
    /// search); it does not see into closures' captures or into other objects.
    public let valueObservers: [ValueObserver]
    /// The internal problems `GraphNode.consistencyViolations(among:)` reports for the same cut
    /// (always empty unless the kit has a bug).
    public let violations: [String]

    /// The edges recorded by only one side; always empty unless the kit has a bug.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(e), e = edges.
    public var oneSidedEdges: [Edge] { edges.filter(\.isOneSided) }

    /// Whether the cut is consistent: no one-sided edges and no violations.
    ///
    /// Dangling entries and value observers do not count: they describe ownership, not errors.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(e), e = edges.
    public var isConsistent: Bool { oneSidedEdges.isEmpty && violations.isEmpty }

    /// Takes a snapshot of the graph reachable from `observables` and `trackingObservers`.
    ///
    /// Thread safety: safe from any thread, while other threads change the graph. No lock is held
    /// while user code runs, and objects are released with no lock held.
    /// Callbacks: no graph callbacks. It reads `graphNode` and `graphDisplayName` of the objects
    /// it meets, and reflects struct observers (which can call a `customMirror`), all with no
    /// lock held.
    /// - Complexity: O((n + e) log n) per cut, n = nodes, e = edges; a cut is taken again only if
    ///   the graph gained reachable observables or tracking observers meanwhile.
    public init(
        observables: [any GraphObservable] = [], trackingObservers: [any GraphTrackingObserver] = []
    ) {
        var discovery = _Discovery()
        let roots: [AnyObject] =
            observables.map { $0 as AnyObject } + trackingObservers.map { $0 as AnyObject }
        for root in roots { discovery.meet(root) }
        while true {
            discovery.explore()
            let cut = _Cut(nodes: GraphNode._inLockOrder(discovery.nodes))
            if !discovery.grows(with: cut) {
                self = GraphSnapshot(roots: roots, cut: cut, discovery: discovery)
                return
            }
        }
    }

    /// A text report: whether the cut is consistent, and every finding, one per line.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(n + e + findings).
    public var report: String {
        let consistent = isConsistent ? "consistent" : "INCONSISTENT"
        let nodeCount = nodes.count == 1 ? "1 node" : "\(nodes.count) nodes"
        let edgeCount = edges.count == 1 ? "1 edge" : "\(edges.count) edges"
        var lines = ["\(consistent): \(nodeCount), \(edgeCount)"]
        for edge in oneSidedEdges {
            lines.append(
                "one-sided edge: \(nodes[edge.observable].name) -> \(nodes[edge.observer].name)")
        }
        for entry in danglingEntries {
            let list = entry.inSubscriptions ? "subscription" : "observer"
            lines.append("dangling: \(nodes[entry.holder].name) lists a deallocated \(list)")
        }
        for value in valueObservers {
            let holders = edges.filter { $0.observer == value.observer }.map(\.observable)
            var line = "held by value: \(nodes[value.observer].name)"
            line +=
                ", held by "
                + (holders.isEmpty ? "nobody" : holders.map { nodes[$0].name }.joined(separator: ", "))
            if !value.ownedObjects.isEmpty {
                line += ", keeps alive " + value.ownedObjects.joined(separator: ", ")
            }
            for node in value.ownedNodes where holders.contains(node) {
                line += " (retain cycle with \(nodes[node].name))"
            }
            lines.append(line)
        }
        lines += violations.map { "violation: \($0)" }
        return lines.joined(separator: "\n")
    }
}

// MARK: - Export

extension GraphSnapshot {
    /// The graph in Graphviz DOT: `dot -Tsvg graph.dot > graph.svg` draws it.
    ///
    /// Nodes are `n0`, `n1`, ... in `nodes` order, labelled with their names. Observables are
    /// boxes (with a double border when they are also observers), tracking observers rounded
    /// boxes, other class observers ellipses, struct observers hexagons. Edges go from the
    /// observable to the observer; a tracked edge is bold, a one-sided edge red and dashed.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(n + e) plus the length of the names.
    public var dot: String {
        var lines = ["digraph ObserverGraph {", "    rankdir=LR;"]
        for (index, node) in nodes.enumerated() {
            let shape: String
            if node.roles.contains(.heldByValue) {
                shape = "shape=hexagon"
            } else if node.roles.contains(.observable) {
                shape = node.roles.contains(.observer) ? "shape=box, peripheries=2" : "shape=box"
            } else if node.roles.contains(.tracking) {
                shape = "shape=box, style=rounded"
            } else {
                shape = "shape=ellipse"
            }
            lines.append("    n\(index) [label=\(Self.dotQuoted(node.name)), \(shape)];")
        }
        for edge in edges {
            var line = "    n\(edge.observable) -> n\(edge.observer)"
            if edge.isOneSided {
                line += " [penwidth=2, color=red, style=dashed, label=\"one-sided\"]"
            } else if edge.isTracked {
                line += " [penwidth=2]"
            }
            lines.append(line + ";")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The graph as a Mermaid flowchart, which GitHub renders in a `mermaid` code block.
    ///
    /// Nodes are `n0`, `n1`, ... in `nodes` order, labelled with their names. Shapes: observable
    /// `["…"]` (`[["…"]]` when also an observer), tracking observer `("…")`, other class observer
    /// `(["…"])`, struct observer `{{"…"}}`. Edges: `-->`, tracked `==>`, one-sided
    /// `-.->|one-sided|`. Quotes, `<`, `>`, `&` and `#` in names are written as entity codes.
    ///
    /// Thread safety: pure. Callbacks: none.
    /// - Complexity: O(n + e) plus the length of the names.
    public var mermaid: String {
        var lines = ["flowchart LR"]
        for (index, node) in nodes.enumerated() {
            let label = "\"" + Self.mermaidEscaped(node.name) + "\""
            let shaped: String
            if node.roles.contains(.heldByValue) {
                shaped = "{{" + label + "}}"
            } else if node.roles.contains(.observable) {
                shaped = node.roles.contains(.observer) ? "[[" + label + "]]" : "[" + label + "]"
            } else if node.roles.contains(.tracking) {
                shaped = "(" + label + ")"
            } else {
                shaped = "([" + label + "])"
            }
            lines.append("    n\(index)" + shaped)
        }
        for edge in edges {
            let arrow = edge.isOneSided ? "-.->|one-sided|" : edge.isTracked ? "==>" : "-->"
            lines.append("    n\(edge.observable) \(arrow) n\(edge.observer)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func dotQuoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result + "\""
    }

    private static func mermaidEscaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\"": result += "#quot;"
            case "<": result += "#lt;"
            case ">": result += "#gt;"
            case "&": result += "#amp;"
            case "#": result += "#35;"
            case "\n": result += " "
            default: result.append(character)
            }
        }
        return result
    }
}

// MARK: - Taking the snapshot

/// Every object the snapshot has met, held strongly until it is done, and the nodes among them.
private struct _Discovery {
    /// Every object met: roots, owners of nodes, plain class observers.
    var objects: [ObjectIdentifier: AnyObject] = [:]
    /// The nodes found, in discovery order, with their owners.
    var nodes: [GraphNode] = []
    var owners: [ObjectIdentifier: AnyObject] = [:]
    /// Nodes not yet read on their own.
    var frontier: [GraphNode] = []

    /// Notes `object`; if it has a node not seen before, queues the node. Runs with no lock held
    /// (it reads `graphNode`).
    mutating func meet(_ object: AnyObject) {
        guard objects.updateValue(object, forKey: ObjectIdentifier(object)) == nil else { return }
        let node: GraphNode
        if let observable = object as? any GraphObservable {
            node = observable.graphNode
        } else if let tracker = object as? any GraphTrackingObserver {
            node = tracker.graphNode
        } else {
            return
        }
        guard owners.updateValue(object, forKey: ObjectIdentifier(node)) == nil else { return }
        nodes.append(node)
        frontier.append(node)
    }

    /// Reads each queued node on its own, and meets the objects it lists, until no node is
    /// queued. The observer list is copied under each node's lock and its objects loaded after
    /// unlocking; the observables of the subscription list are loaded under the lock (its
    /// entries name nodes, see `GraphNode._owners`) and released after unlocking.
    mutating func explore() {
        while let node = frontier.popLast() {
            let observers = node._state.withLock { $0.observers.slots }
            for slot in observers where slot.bits & _SlotFlags.boxed == 0 {
                if let object = slot.object { meet(object) }
            }
            for case let object? in node._subscriptionObjects() { meet(object) }
        }
    }

    /// Whether `cut` lists an object with a node outside the cut; meets every object it lists.
    mutating func grows(with cut: _Cut) -> Bool {
        for objects in cut.observerObjects + cut.subscriptionObjects {
            for case let object? in objects where !(object is _ValueObserverBox) {
                meet(object)
            }
        }
        return !frontier.isEmpty
    }
}

/// One consistent cut: the states of a set of nodes, and the objects of their entries, all read
/// while every one of those nodes was locked.
private struct _Cut {
    let nodes: [GraphNode]
    let states: [_NodeState]
    /// Per node, the object of each observer slot at the cut (`nil`: vacant or deallocated).
    let observerObjects: [[AnyObject?]]
    /// Per node, the object of each subscription slot at the cut.
    let subscriptionObjects: [[AnyObject?]]

    init(nodes: [GraphNode]) {
        self.nodes = nodes
        var observerObjects: [[AnyObject?]] = []
        var subscriptionObjects: [[AnyObject?]] = []
        // Under all the locks: load each weak reference and carry the object out. Nothing is
        // released here; the arrays are released by the caller, after unlocking. The nodes the
        // subscription entries name are used under the teardown lock (`GraphNode._owners`).
        states = _graphTeardown.run {
            var peers: [Unmanaged<GraphNode>] = []
            let states = GraphNode._captureLocked(nodes) { states in
                observerObjects.reserveCapacity(states.count)
                subscriptionObjects.reserveCapacity(states.count)
                for state in states {
                    observerObjects.append(state.observers.slots.map { $0.bits == 0 ? nil : $0.object })
                    subscriptionObjects.append(GraphNode._owners(of: state.subscriptions, retaining: &peers))
                }
            }
            for peer in peers { peer.release() }
            return states
        }
        self.observerObjects = observerObjects
        self.subscriptionObjects = subscriptionObjects
    }
}

extension GraphSnapshot {
    /// Identifies a snapshot node: an object, or a struct observer by its `ObserverID`.
    private enum Key: Hashable {
        case object(ObjectIdentifier)
        case value(ObserverID)
    }

    /// Builds the snapshot from a closed cut. Runs with no lock held.
    private init(roots: [AnyObject], cut: _Cut, discovery: _Discovery) {
        var position: [ObjectIdentifier: Int] = [:]  // node -> index in the cut
        for (index, node) in cut.nodes.enumerated() { position[ObjectIdentifier(node)] = index }
        func cutIndex(of object: AnyObject) -> Int? {
            let node =
                (object as? any GraphObservable)?.graphNode
                ?? (object as? any GraphTrackingObserver)?.graphNode
            return node.flatMap { position[ObjectIdentifier($0)] }
        }

        var nodes: [Node] = []
        var keys: [Key: Int] = [:]
        var ownerOf: [Int: Int] = [:]  // snapshot node index -> index in the cut
        var boxes: [Int: _ValueObserverBox] = [:]
        var queue: [Int] = []
        func visit(_ object: AnyObject, bits: UInt64 = 0) -> Int {
            let isBoxed = bits & _SlotFlags.boxed != 0
            let key: Key =
                isBoxed
                ? .value(ObserverID(_raw: bits & _SlotFlags.keyMask)) : .object(ObjectIdentifier(object))
            if let index = keys[key] { return index }
            let index = nodes.count
            keys[key] = index
            if isBoxed {
                let box = unsafeDowncast(object, to: _ValueObserverBox.self)
                boxes[index] = box
                nodes.append(Node(name: box.observer.graphDisplayName, roles: [.observer, .heldByValue]))
                return index
            }
            var roles: Roles = []
            if object is any GraphObservable { roles.insert(.observable) }
            if object is any GraphObserver { roles.insert(.observer) }
            if object is any GraphTrackingObserver { roles.insert(.tracking) }
            let name =
                (object as? any GraphObservable)?.graphDisplayName
                ?? (object as? any GraphObserver)?.graphDisplayName
                ?? _graphDefaultDisplayName(type(of: object), ObserverID(object))
            nodes.append(Node(name: name, roles: roles))
            if let owned = cutIndex(of: object) {
                ownerOf[index] = owned
                queue.append(index)
            }
            return index
        }

        // Breadth first from the roots: each node's observers, then its subscriptions.
        for root in roots { _ = visit(root) }
        var head = 0
        while head < queue.count {
            let index = queue[head]
            head += 1
            let owned = ownerOf[index]!
            let state = cut.states[owned]
            for (slot, object) in zip(state.observers.slots, cut.observerObjects[owned]) {
                if let object { _ = visit(object, bits: slot.bits) }
            }
            for object in cut.subscriptionObjects[owned] {
                if let object { _ = visit(object) }
            }
        }

        // Edges from the observer lists; then edges only a tracking observer records.
        var edges: [Edge] = []
        var dangling: [DanglingEntry] = []
        let ownedNodes = ownerOf.keys.sorted()
        for index in ownedNodes {
            let owned = ownerOf[index]!
            let state = cut.states[owned]
            let selfKey = ObserverID(cut.nodes[owned])
            for (slot, object) in zip(state.observers.slots, cut.observerObjects[owned]) where slot.bits != 0
            {
                guard let object else {
                    dangling.append(DanglingEntry(holder: index, inSubscriptions: false))
                    continue
                }
                let observer = visit(object, bits: slot.bits)
                var isTracked = false
                var isOneSided = false
                if let trackerOwned = ownerOf[observer], nodes[observer].roles.contains(.tracking) {
                    isTracked = true
                    let listed = cut.states[trackerOwned].subscriptions.contains(selfKey)
                    isOneSided = !listed || slot.bits & _SlotFlags.tracking == 0
                }
                edges.append(
                    Edge(observable: index, observer: observer, isTracked: isTracked, isOneSided: isOneSided))
            }
        }
        for index in ownedNodes {
            let owned = ownerOf[index]!
            let state = cut.states[owned]
            let selfKey = ObserverID(cut.nodes[owned])
            for (key, object) in zip(state.subscriptions.entryKeys, cut.subscriptionObjects[owned])
            where key != 0 {
                guard let object else {
                    dangling.append(DanglingEntry(holder: index, inSubscriptions: true))
                    continue
                }
                let observable = visit(object)
                guard let observableOwned = ownerOf[observable] else { continue }
                if cut.states[observableOwned].observers.index[selfKey] == nil {
                    edges.append(
                        Edge(observable: observable, observer: index, isTracked: true, isOneSided: true))
                }
            }
        }

        var valueObservers: [ValueObserver] = []
        for index in boxes.keys.sorted() {
            var owned = _OwnedObjects()
            owned.collect(from: boxes[index]!.observer, depth: 0)
            var names: [String] = []
            var inSnapshot: [Int] = []
            for object in owned.objects {
                if let node = keys[.object(ObjectIdentifier(object))] {
                    names.append(nodes[node].name)
                    inSnapshot.append(node)
                } else {
                    names.append(_graphDefaultDisplayName(type(of: object), ObserverID(object)))
                }
            }
            valueObservers.append(ValueObserver(observer: index, ownedObjects: names, ownedNodes: inSnapshot))
        }

        self.nodes = nodes
        self.edges = edges
        self.danglingEntries = dangling
        self.valueObservers = valueObservers
        self.violations = GraphNode._violations(among: cut.nodes, states: cut.states)
        withExtendedLifetime(discovery) {}
    }
}

/// The objects a value holds, found by reflection: through structs, enums, tuples, optionals and
/// collections, not into objects. Bounded in depth and count.
private struct _OwnedObjects {
    var objects: [AnyObject] = []
    private var seen: Set<ObjectIdentifier> = []
    private var visited = 0

    mutating func collect(from value: Any, depth: Int) {
        for child in Mirror(reflecting: value).children {
            visited += 1
            guard visited <= 1_000 else { return }
            if type(of: child.value) is AnyClass {
                let object = child.value as AnyObject
                if seen.insert(ObjectIdentifier(object)).inserted { objects.append(object) }
            } else if depth < 8 {
                collect(from: child.value, depth: depth + 1)
            }
        }
    }
}
