import Dispatch

#if canImport(Darwin)
    import Darwin
#endif

/// Whether the calling code runs on the main actor, for code that has no `isolated` parameter to
/// say so: a property setter (`value.value = x`, `names[0] = x`), a nonisolated function, a
/// derived value's propagation pass. Its observers on the main actor are then called at once, as
/// from `set(_:)`, instead of through their mailbox on the main actor's next turn. (Not a
/// source's deinit: it runs wherever the last reference went, inside a mutation of the app's
/// state, say, where a main-actor closure must not run; see `_EventSink.deliver`.)
///
/// The main actor's executor is the main dispatch queue, so code on that queue (or on a queue
/// that targets it, which runs serialized with it) runs on the main actor. A value set on the
/// main queue, under a key of the kit's, tells: `DispatchQueue.getSpecific(key:)` finds it there
/// and on no other queue (about 9 ns off the main queue, 20 ns on it, measured on Linux). On
/// Apple platforms, the main thread drains the main queue only, so `pthread_main_np` answers
/// first. An answer of `false` on the main actor (main-actor code inside
/// `DispatchQueue.global().sync { }`, on Linux) only leaves calls to the actor's next turn: for
/// that delivery, or, asked where an observation is made, for every delivery with no isolation
/// to it.
///
/// A program whose main actor does not run on the main queue (a custom main executor) would
/// make `true` wrong: each main-actor observation checks this where it is made, which always
/// runs on the main actor, and uses the answer only if it was `true` there
/// (`_EventSink._mainQueueIsMainActor`).
///
/// Thread safety: callable from any thread. The key is set on the main queue the first time
/// this is asked, once.
@usableFromInline
enum _MainActorCheck {
    /// What the main queue holds under `key`: its presence is the answer.
    final class Marker: Sendable {}

    /// Set on the main queue when first read (a `static let` is initialized once, thread-safely).
    static let key: DispatchSpecificKey<Marker> = {
        let key = DispatchSpecificKey<Marker>()
        DispatchQueue.main.setSpecific(key: key, value: Marker())
        return key
    }()

    /// Whether the caller runs on the main actor (see above).
    @usableFromInline
    static func isCurrent() -> Bool {
        #if canImport(Darwin)
            if pthread_main_np() != 0 { return true }
        #endif
        return DispatchQueue.getSpecific(key: key) != nil
    }

    /// The main actor's identity, as the sinks hold it (`_EventSink.actorIdentity`): read once,
    /// because each read of `MainActor.shared` counts a reference to an object that every
    /// thread touching the main actor counts too.
    @usableFromInline
    static let mainActor = ObjectIdentifier(MainActor.shared)
}
