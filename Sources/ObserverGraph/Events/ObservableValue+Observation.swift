#if canImport(Observation)
    import Observation

    /// A read-only mirror of an `ObservableValue` for Swift's Observation: SwiftUI views (and
    /// `withObservationTracking`, `Observations`) read `value` and are updated when it changes.
    ///
    ///     struct CreditsView: View {
    ///         @State private var credits = wallet.credits.observed()
    ///         var body: some View { Text("\(credits.value) credits") }
    ///     }
    ///
    /// The mirror lives on the main actor: it observes its source with a main-actor closure, so a
    /// change made on the main actor is visible at once, and one made elsewhere on the main
    /// actor's next turn. It keeps its source alive and stops observing when it is deallocated.
    ///
    /// Isolation: the main actor. Callbacks: Observation's change notifications for `value`.
    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
    @MainActor
    @Observable
    public final class ObservedValue<Value: Sendable> {
        /// The source's latest value.
        ///
        /// Isolation: the main actor. Callbacks: none.
        /// - Complexity: O(1).
        public private(set) var value: Value

        @ObservationIgnored private let source: ObservableValue<Value>
        @ObservationIgnored private var token: SubscriptionToken?

        /// A mirror of `source`, starting at its current value.
        ///
        /// Isolation: the main actor. Callbacks: none now; later, Observation's notifications.
        /// - Complexity: O(1).
        public init(_ source: ObservableValue<Value>) {
            self.source = source
            self.value = source.value
            token = source.observeValues { [weak self] newValue in self?.value = newValue }
        }
    }

    @available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
    extension ObservableValue {
        /// A main-actor `@Observable` mirror of this value, for SwiftUI: see `ObservedValue`.
        ///
        /// Isolation: the main actor. Callbacks: none now.
        /// - Complexity: O(1).
        @MainActor
        public func observed() -> ObservedValue<Value> {
            ObservedValue(self)
        }
    }
#endif

extension ObservableValue {
    /// Sets this value to each element of `sequence`, in order, until the sequence ends or the
    /// calling task is cancelled: how a kit value follows Swift's `Observations`
    /// (`credits.follow(Observations { model.credits })`) or any other async sequence.
    ///
    /// Each element is set with `set(_:isolation:)` from the caller's actor, so observers living
    /// on that actor are called before the next element is awaited.
    ///
    /// Thread safety: run it in a task of its own; cancelling that task ends it. Callbacks: this
    /// value's observers, once per element.
    /// - Throws: what the sequence throws.
    /// - Complexity: O(1) per element plus the delivery.
    public func follow<Elements: AsyncSequence>(
        _ sequence: Elements, isolation: isolated (any Actor)? = #isolation
    ) async throws where Elements.Element == Value {
        for try await element in sequence {
            set(element, isolation: isolation)
        }
    }
}
