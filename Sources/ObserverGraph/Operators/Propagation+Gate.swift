import Synchronization

/// The fast path of a component's passes, where the OS has atomics: a thread that finds the
/// component idle begins and ends its pass with one atomic exchange each, instead of two
/// critical sections of the domain's lock.
///
/// The word says who owns the component:
/// - `0`: idle, and the lock path has nothing in progress: a pass may begin here;
/// - `running` (1): a fast pass is running (its runner is not in the state's `runners`);
/// - `slow` (2): the lock path owns the component (jobs are queued, a lock-path pass runs, or the
///   domain was merged): every pass begins and ends through the lock;
/// - `counted` (4): the running fast pass was counted in `runners` by the lock path.
///
/// Whatever takes the lock path on a domain first takes it over (`takeOver`, under its lock):
/// it sets `slow`, and counts a fast pass running at that moment as one of the state's
/// `runners`. So the state's count is exact for the lock path (merges add up running passes,
/// jobs are left to a running pass), and a fast pass that finds the word changed at its end
/// leaves through the lock path, as a counted runner: it runs what was queued meanwhile. The
/// lock path gives the component back (`release`) when it leaves a root idle: no runner, nothing
/// queued. A merged domain (no longer a root) keeps `slow` for good.
///
/// It is the domain's reusable pass (`_PropagationDomain.reusablePass`), so that an input node
/// holding it reaches the word and the pass with one reference. The root's epoch is mirrored in
/// `epochMirror` (written under the lock). A fast pass reads it before
/// it begins: a merge in between makes the exchange fail, and one before it is seen, or at
/// worst treated as newer than the pass, whose events along the merge's edges are then queued
/// for a pass of their own, which is always correct.
///
/// Thread safety: `Sendable`; atomics only.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@usableFromInline
final class _DomainGate: _Pass, @unchecked Sendable {
    @usableFromInline let word = Atomic<UInt>(0)
    @usableFromInline let epochMirror = Atomic<UInt64>(0)

    @inlinable static var running: UInt { 1 }
    @inlinable static var slow: UInt { 2 }
    @inlinable static var counted: UInt { 4 }

    @usableFromInline override init() {}

    /// Begins a fast pass (this pass) when the component is idle; `false` otherwise.
    @inlinable
    func tryBegin() -> Bool {
        let epoch = epochMirror.load(ordering: .acquiring)
        guard
            word.compareExchange(expected: 0, desired: Self.running, ordering: .acquiringAndReleasing)
                .exchanged
        else { return false }
        self.epoch = epoch
        return true
    }

    /// Ends a fast pass; `false` when the lock path took the component over meanwhile (then
    /// the runner was counted, and must leave through the lock path).
    @inlinable
    func tryEnd() -> Bool {
        word.compareExchange(expected: Self.running, desired: 0, ordering: .acquiringAndReleasing).exchanged
    }

    /// Under the domain's lock: the lock path takes the component over. Returns whether a fast
    /// pass is running that must now be counted in `runners`.
    @usableFromInline
    func takeOver() -> Bool {
        var seen = word.load(ordering: .acquiring)
        while true {
            let uncounted = seen & Self.running != 0 && seen & Self.counted == 0
            let desired = seen | Self.slow | (uncounted ? Self.counted : 0)
            if desired == seen { return false }
            let (exchanged, now) = word.compareExchange(
                expected: seen, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return uncounted }
            seen = now
        }
    }

    /// Under the domain's lock: a fast pass whose end found the word changed leaves it (it was
    /// counted in `runners` by the takeover).
    @usableFromInline
    func leaveCounted() {
        _ = word.bitwiseAnd(~(Self.running | Self.counted), ordering: .acquiringAndReleasing)
    }

    /// Under the domain's lock: the lock path leaves an idle root; fast passes may begin again.
    @usableFromInline
    func release() {
        _ = word.compareExchange(expected: Self.slow, desired: 0, ordering: .acquiringAndReleasing)
    }
}
