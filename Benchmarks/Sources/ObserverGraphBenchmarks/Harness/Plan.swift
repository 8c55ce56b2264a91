// Sizes, sample counts and time budgets of a run. The full plan keeps a whole run to a few
// minutes on a 2-core machine; the smoke plan takes seconds.

struct Plan: Sendable {
    /// Observer counts for the broadcast fan-out.
    var fanOutSizes: [Int]
    /// Recorded samples per fan-out contender (after a calibration that also warms up).
    var fanOutSamples: Int
    /// How long one fan-out sample should last.
    var fanOutSampleNanoseconds: UInt64

    /// Observer counts for subscribe/unsubscribe churn.
    var churnSizes: [Int]
    /// Recorded samples per churn contender (warm-up excluded), below and at the largest size.
    var churnSamples: Int
    var churnSamplesAtLargest: Int
    /// Unrecorded warm-up samples per churn contender.
    var churnWarmup: Int
    /// Operations one churn sample should cover at least: small sizes repeat the
    /// subscribe-all/unsubscribe-all cycle (on fresh observables) to reach it.
    var churnOperationsPerSample: Int
    /// The largest size at which the peers (OpenCombine, NotificationCenter) take part in churn.
    var churnPeerLimit: Int

    /// Observer count for the `isSubscribed` lookups, the queries per sample (a seeded random
    /// selection of the observers) and the samples taken.
    var lookupSize: Int
    var lookupQueriesPerSample: Int
    var lookupSamples: Int

    /// Subscription count for bytes per edge, and how many fresh sets are measured.
    var memorySize: Int
    var memorySamples: Int

    /// Iterations (subscribe + broadcast + unsubscribe) per thread's share of the contention
    /// work, and the samples taken.
    var contentionIterations: Int
    var contentionSamples: Int

    /// Observer counts for the observable value set, the recorded samples per contender, and how
    /// long one sample should last.
    var valueSetSizes: [Int]
    var valueSetSamples: Int
    var valueSetSampleNanoseconds: UInt64

    /// Elements pushed to the consuming task in one async sample, and the samples taken.
    var asyncElements: Int
    var asyncSamples: Int

    /// Single appends made on another thread to an array a main-actor closure observes, in one
    /// sample (the samples taken are `asyncSamples`).
    var actorArrayAppends: Int

    /// Appends (onto an empty array) in one array-append sample, and the samples taken.
    var arrayAppends: Int
    var arrayAppendSamples: Int

    /// The diffed arrays' length, the elements deleted (and as many inserted), the samples taken
    /// and how long one sample (several diffs) should last.
    var diffSize: Int
    var diffChanges: Int
    var diffSamples: Int
    var diffSampleNanoseconds: UInt64

    /// Sets through the operator chain in one sample (a multiple of 4; the diamond takes a
    /// quarter of them), and the samples taken.
    var operatorSets: Int
    var operatorSamples: Int

    /// Values made, observed and released in one sample of the value lifecycle, and the
    /// samples taken.
    var lifecycleValues: Int
    var lifecycleSamples: Int

    /// The size the targets name for churn, lookup and memory ("at N = 1M").
    var largeSize: Int { churnSizes.max() ?? 0 }

    static let full = Plan(
        fanOutSizes: [1, 10, 1_000, 100_000],
        fanOutSamples: 15,
        fanOutSampleNanoseconds: 20_000_000,
        churnSizes: [1_000, 100_000, 1_000_000],
        churnSamples: 7,
        churnSamplesAtLargest: 3,
        churnWarmup: 1,
        churnOperationsPerSample: 50_000,
        churnPeerLimit: 100_000,
        lookupSize: 1_000_000,
        lookupQueriesPerSample: 200_000,
        lookupSamples: 7,
        memorySize: 1_000_000,
        memorySamples: 3,
        contentionIterations: 20_000,
        contentionSamples: 7,
        valueSetSizes: [1, 10, 1_000],
        valueSetSamples: 15,
        valueSetSampleNanoseconds: 20_000_000,
        asyncElements: 100_000,
        asyncSamples: 7,
        actorArrayAppends: 16_000,
        arrayAppends: 100_000,
        arrayAppendSamples: 7,
        diffSize: 10_000,
        diffChanges: 50,
        diffSamples: 15,
        diffSampleNanoseconds: 20_000_000,
        operatorSets: 1_000_000,
        operatorSamples: 5,
        lifecycleValues: 100_000,
        lifecycleSamples: 7
    )

    static let smoke = Plan(
        fanOutSizes: [1, 10, 1_000],
        fanOutSamples: 3,
        fanOutSampleNanoseconds: 1_000_000,
        churnSizes: [1_000, 10_000],
        churnSamples: 2,
        churnSamplesAtLargest: 2,
        churnWarmup: 1,
        churnOperationsPerSample: 10_000,
        churnPeerLimit: 10_000,
        lookupSize: 10_000,
        lookupQueriesPerSample: 10_000,
        lookupSamples: 2,
        memorySize: 10_000,
        memorySamples: 1,
        contentionIterations: 500,
        contentionSamples: 2,
        valueSetSizes: [1, 10, 1_000],
        valueSetSamples: 3,
        valueSetSampleNanoseconds: 1_000_000,
        asyncElements: 5_000,
        asyncSamples: 2,
        actorArrayAppends: 2_000,
        arrayAppends: 10_000,
        arrayAppendSamples: 2,
        diffSize: 10_000,
        diffChanges: 50,
        diffSamples: 2,
        diffSampleNanoseconds: 1_000_000,
        operatorSets: 8_000,
        operatorSamples: 2,
        lifecycleValues: 5_000,
        lifecycleSamples: 2
    )
}
