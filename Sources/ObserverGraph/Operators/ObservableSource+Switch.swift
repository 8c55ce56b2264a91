/// Operators that follow a source chosen by the latest value.
extension ObservableSource {
    /// For each value, the source `transform` returns, followed until the next value replaces it
    /// (Combine's `map` + `switchToLatest`, RxSwift's `flatMapLatest`).
    ///
    ///     let location = permission.flatMapLatest { granted in granted ? gps.fixes : noFixes }
    ///
    /// The result keeps the current inner source alive and drops the previous one's edge when a
    /// new value arrives; events of a replaced inner source never pass. A value inner source
    /// passes its current value at once. The result finishes when this source and the current
    /// inner source have both finished, and fails when either fails.
    ///
    /// Glitch-free with respect to this source. An inner source that sits deeper in the operator
    /// graph than the result can make a `combineLatest` below compute twice in one pass (with
    /// consistent inputs each time). A join (`combineLatest`, `merge`) that `transform` builds
    /// from sources of the graph running the pass starts after that pass, so the result's first
    /// value from it follows in a pass of its own.
    ///
    /// Thread safety: safe from any thread. Callbacks: `transform` (`@Sendable`), on the thread
    /// propagating the change, with no lock held.
    /// - Complexity: O(1) per event, plus building the inner source for each value.
    public func flatMapLatest<Inner: ObservableSource>(
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> DerivedValue<Inner.Value> {
        let state = _OperatorCell(_SwitchState())
        // The current inner edge's removal: under a lock, because the result's deinit (any
        // thread) takes it while a pass may be switching.
        let link = GraphLock(_SwitchLink())
        let parent = _operatorNodeForNewEdge()
        return DerivedValue(
            "flatMapLatest", upstreams: [self], inputs: [parent], replays: parent.replays
        ) { node in
            node.onDetach { link.withLock { $0.detach() }?() }
            parent.attach(node) { node, event, pass in
                switch event {
                case .value(let value):
                    let inner = transform(value)
                    let innerNode = inner._operatorNodeForNewEdge()
                    // The inner source's component joins this one (edges made by the merge carry
                    // its new epoch), before the edge is made.
                    _ = _PropagationDomain.joining([node.domain, innerNode.domain])
                    let previous = link.withLock { $0.take() }
                    state.value.generation &+= 1
                    state.value.innerFinished = false
                    state.value.current = inner
                    previous?()
                    let generation = state.value.generation
                    let id = innerNode.attach(node, in: pass, removedAtDeinit: false) { node, event, pass in
                        guard state.value.generation == generation else { return }
                        if case .finished = event {
                            state.value.innerFinished = true
                            if !state.value.outerFinished { return }
                        }
                        node.emit(event, pass)
                    }
                    // Released meanwhile: nothing would remove the edge later.
                    let disconnect: @Sendable () -> Void = { innerNode.disconnect(id) }
                    if !link.withLock({ $0.keep(disconnect) }) {
                        disconnect()
                        state.value.current = nil
                    }
                case .finished:
                    state.value.outerFinished = true
                    if state.value.innerFinished { node.emit(.finished, pass) }
                case .failed(let error):
                    node.emit(.failed(error), pass)
                }
            }
        }
    }
}

extension ObservableSource where Value: ObservableSource {
    /// The events of the latest source this source delivered (Combine's `switchToLatest`,
    /// RxSwift's `switchLatest`): `flatMapLatest { $0 }`, with the same rules.
    ///
    /// Thread safety: safe from any thread. Callbacks: none.
    /// - Complexity: O(1) per event.
    public func switchToLatest() -> DerivedValue<Value.Value> {
        flatMapLatest { $0 }
    }
}

/// The inner source a `flatMapLatest` follows.
struct _SwitchState {
    var generation: UInt64 = 0
    /// Kept alive while followed.
    var current: (any Sendable)?
    var outerFinished = false
    var innerFinished = true
}

/// What removes a `flatMapLatest`'s current inner edge, and whether the result was released.
struct _SwitchLink {
    var disconnect: (@Sendable () -> Void)?
    var detached = false

    /// The current edge's removal, taken (the caller runs it after unlocking).
    mutating func take() -> (@Sendable () -> Void)? {
        defer { disconnect = nil }
        return disconnect
    }

    /// The result's deinit: no edge is kept from now on; returns the current one's removal.
    mutating func detach() -> (@Sendable () -> Void)? {
        detached = true
        return take()
    }

    /// Keeps `remove` for the new edge; `false` when the result was released meanwhile.
    mutating func keep(_ remove: @escaping @Sendable () -> Void) -> Bool {
        guard !detached else { return false }
        disconnect = remove
        return true
    }
}
