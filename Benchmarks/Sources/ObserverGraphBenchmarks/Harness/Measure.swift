// Timing primitives: the clock, the optimizer barriers, sample statistics and the round-robin
// sampler every scenario uses.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Nanoseconds on the monotonic clock.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Consumes a value in a way the optimizer cannot see through, so the work that produced it
/// cannot be deleted.
@_optimize(none) @inline(never)
func blackHole<T>(_ value: T) {}

/// Returns its argument through a function the optimizer does not look into, so that the value
/// is unknown at compile time (no constant folding of the measured work).
@_optimize(none) @inline(never)
func opaque<T>(_ value: T) -> T { value }

/// Median, minimum and maximum of a set of samples.
struct Stats: Sendable {
    var median: Double
    var min: Double
    var max: Double
    var samples: Int

    init(_ values: [Double]) {
        precondition(!values.isEmpty, "no samples")
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
        samples = sorted.count
    }

    /// A single exact value (a derived number, not a timing).
    init(single value: Double) {
        median = value
        min = value
        max = value
        samples = 1
    }
}

/// One implementation taking part in a round-robin measurement.
///
/// `sample` runs one sample and returns one value per metric (for example ns per subscribe and
/// ns per unsubscribe). Set-up it needs per sample happens inside `sample`, outside its timers.
struct Contender {
    let name: String
    let sample: () -> [Double]
}

/// Runs `warmup` unrecorded samples of every contender, then `samples` recorded ones, taking
/// turns (A B C, B C A, C A B, ...) so that a slow period of the machine (a neighbour compiling)
/// hits every contender alike. Returns, per contender, the stats of each metric.
func roundRobin(_ contenders: [Contender], samples: Int, warmup: Int) -> [[Stats]] {
    var values: [[[Double]]] = Array(repeating: [], count: contenders.count)
    let total = warmup + samples
    for turn in 0..<total {
        for offset in 0..<contenders.count {
            let index = (turn + offset) % contenders.count
            let result = contenders[index].sample()
            if turn >= warmup { values[index].append(result) }
        }
    }
    return values.map { perSample in
        let metrics = perSample[0].count
        return (0..<metrics).map { metric in Stats(perSample.map { $0[metric] }) }
    }
}

/// How many repetitions of `timed` make one sample last about `targetNanoseconds`. `timed(n)`
/// runs n repetitions and returns the nanoseconds they took. The calibration runs also warm up
/// caches, branch predictors and lazily built runtime structures.
func calibrateRepetitions(targetNanoseconds: UInt64, _ timed: (Int) -> UInt64) -> Int {
    var repetitions = 1
    while true {
        let elapsed = timed(repetitions)
        if elapsed >= targetNanoseconds / 4 || repetitions >= 1 << 26 {
            let scaled = Double(repetitions) * Double(targetNanoseconds) / Double(Swift.max(elapsed, 1))
            return Swift.max(1, Int(scaled.rounded()))
        }
        repetitions *= 4
    }
}

/// A small, seeded, reproducible random number generator (SplitMix64), for shuffled orders.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The positions 0..<count in a seeded random order.
func shuffledPositions(_ count: Int, seed: UInt64) -> [Int] {
    var generator = SeededGenerator(seed: seed)
    var positions = Array(0..<count)
    positions.shuffle(using: &generator)
    return positions
}

/// Stops the run when a measurement did not do the work it claims to have done.
func verify(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("verification failed: \(message())")
    }
}
