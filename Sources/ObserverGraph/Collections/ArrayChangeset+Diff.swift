// Diffing two arrays into an `ArrayChangeset`.
//
// Algorithm (a hybrid): after trimming the common prefix and suffix, Myers' O((N+M)·D) algorithm
// looks for a shortest script of deletes and inserts, but only while D (deletes plus inserts)
// stays small enough that it costs less than hashing every element: for hashable elements, up
// to √(8(N+M)) (at least 128) and 8 comparisons per element; from step 128 on, a search whose
// progress predicts that it needs more gives up at once (a prediction that assumes the edits
// spread evenly: edits bunched in one part can make it give up below the limit). When D is
// larger, hashable elements are matched in linear time instead, in the manner of Heckel's
// algorithm: each new element takes the first unused old element with the same key (for
// distinct elements this is the only matching, so deletes and inserts are exactly the elements
// present on one side only). When some key is held by several old elements and that matching
// is out of order, it is no shortest script, so Myers runs again with more room (up to 1,024
// edits, within about 64 comparisons per element plus 16,384). Past that, a second
// matching is tried, where each new element takes the first unused equal old element at or
// after where the matches so far continue, and the one that makes fewer changes is kept (the
// first suits repeated elements moved or inserted, the second some of them deleted); then the
// gaps between the elements it keeps in place are matched again by shortest scripts of their
// own. Either way, deleted and inserted elements that are equal are paired into moves, and the
// matched elements that keep their relative order stay in place (a longest increasing run), so
// the number of moves is the smallest for the matching.
// `Equatable`-only elements keep Myers up to `maximumMinimalEdits`, then reload.

extension ArrayChangeset {
    /// Above this many deletes plus inserts, diffing `Equatable`-only elements stops looking for
    /// the shortest script (and reloads). Below it, deleted and inserted elements that are equal
    /// are paired into moves while deletes times inserts is at most 262,144 (512 × 512: the
    /// pairing compares each deleted element with each inserted one); past that, they stay
    /// deletes and inserts.
    public static let maximumMinimalEdits = 2_048

    /// The changeset that turns `old` into `new`, with the fewest deletes and inserts, and with
    /// equal elements that changed place reported as moves.
    ///
    ///     ArrayChangeset.diff(from: [1, 2, 3], to: [0, 1, 3, 4])   // deletes [1], inserts [0, 3]
    ///
    /// Thread safety: pure. Callbacks: `==` of `Element`.
    /// - Complexity: O((N + M)·D) time and O(D²) memory, D = deletes + inserts, plus
    ///   O(deletes × inserts) to pair moves; see `maximumMinimalEdits` for large D.
    @inlinable
    public static func diff<Element: Equatable>(from old: [Element], to new: [Element]) -> ArrayChangeset {
        let matches = ArrayDiff.matches(old.count, new.count, limit: maximumMinimalEdits) {
            old[$0] == new[$1]
        }
        guard let matches else { return .reload(oldCount: old.count, newCount: new.count) }
        var origins = ArrayDiff.origins(matches, newCount: new.count)
        ArrayDiff.pairMoves(&origins, oldCount: old.count) { old[$0] == new[$1] }
        return fromOrigins(origins, oldCount: old.count, updated: nil)
    }

    /// The same, for hashable elements, in linear time when many elements changed: the fewest
    /// deletes and inserts while few changed (Myers), else a linear matching of equal elements
    /// (exactly the fewest for distinct elements); moves are the fewest for the matching.
    ///
    /// Myers gives way to the matching when D would pass √(8(N + M)) (at least 128), when its
    /// progress after 128 steps predicts that (edits bunched in one part of the arrays can hand
    /// over below it), or after about 8 comparisons per element (many equal elements). With
    /// repeated elements out of order in the matching, Myers runs again with more room: a
    /// shortest script up to 1,024 edits, within about 64 comparisons per element plus 16,384
    /// (so on arrays of a few thousand elements, up to about 700 edits). Past that, the
    /// matching tries two greedy rules (each new element takes the first unused equal old
    /// element, or the first at or after where the matches so far continue), keeps the one with
    /// fewer changes, and matches again the gaps between the elements it keeps in place; a mix
    /// of inserts, deletes and moves among repeated elements can then report many moves that a
    /// shortest script would not have. Distinct elements, or elements matched by unique
    /// identities (`diff(from:to:identifiedBy:)`), do not have this. The second search costs
    /// little when it succeeds; on unrelated arrays of a few values, where it spends its budget
    /// for nothing, the diff takes up to about 5 times as long as the linear matching alone.
    ///
    /// Thread safety: pure. Callbacks: `==` and `hash(into:)` of `Element`.
    /// - Complexity: O(N + M + D²) time and memory while Myers runs (see above), else O(N + M)
    ///   expected time (hashing); with repeated elements out of order, plus O(N + M + min(D,
    ///   1,024)²) for the second search and, past it, O(N + M) for the two matchings and their
    ///   gaps; plus O(K log K) for the K elements that change place; O(N + M) memory besides.
    @inlinable
    public static func diff<Element: Hashable>(from old: [Element], to new: [Element]) -> ArrayChangeset {
        fromOrigins(ArrayDiff.hashedOrigins(old, new), oldCount: old.count, updated: nil)
    }

    /// The changeset between two arrays of elements with a stable identity: elements are matched
    /// by `id` (as the `Hashable` diff matches elements), and a matched element whose content
    /// changed (`!=`) is an update; if it also moved, a delete plus an insert here (a staged
    /// changeset keeps it a move followed by a reload: see `StagedChangeset`).
    ///
    /// Identities should be unique within each array; duplicates are matched as the `Hashable`
    /// diff matches repeated elements.
    ///
    /// Thread safety: pure. Callbacks: `id`, and `==` of `Element`.
    /// - Complexity: as the `Hashable` diff, plus one `==` per matched element.
    @inlinable
    public static func diff<Element: Equatable, ID: Hashable>(
        from old: [Element], to new: [Element], identifiedBy id: (Element) -> ID
    ) -> ArrayChangeset {
        let (origins, updated) = ArrayDiff.identifiedOrigins(old, new, identifiedBy: id)
        return fromOrigins(origins, oldCount: old.count, updated: updated)
    }
}

@usableFromInline
enum ArrayDiff {
    /// For each new position of `new`, the old index matched to it (-1: inserted), by the
    /// hybrid described at the top of this file.
    @inlinable
    static func hashedOrigins<Key: Hashable>(_ old: [Key], _ new: [Key]) -> [Int] {
        var origins = [Int](repeating: -1, count: new.count)
        hashedOrigins(old, 0..<old.count, new, 0..<new.count, into: &origins)
        return origins
    }

    /// `hashedOrigins` of `old[oldRange]` against `new[newRange]`: writes the old index matched
    /// to each new position of `newRange` into `origins` (indexed like `new`), and leaves the
    /// unmatched ones as they are (-1 when fresh). Used per section by the sectioned diff.
    @inlinable
    static func hashedOrigins<Key: Hashable>(
        _ old: [Key], _ oldRange: Range<Int>, _ new: [Key], _ newRange: Range<Int>, into origins: inout [Int]
    ) {
        let oldStart = oldRange.lowerBound
        let newStart = newRange.lowerBound
        let oldCount = oldRange.count
        let newCount = newRange.count
        var prefix = 0
        while prefix < oldCount && prefix < newCount && old[oldStart + prefix] == new[newStart + prefix] {
            prefix += 1
        }
        var suffix = 0
        while suffix < oldCount - prefix && suffix < newCount - prefix
            && old[oldRange.upperBound - 1 - suffix] == new[newRange.upperBound - 1 - suffix]
        {
            suffix += 1
        }
        origins.withUnsafeMutableBufferPointer { origins in
            for i in 0..<prefix { origins[newStart + i] = oldStart + i }
            for s in 0..<suffix {
                origins[newRange.upperBound - suffix + s] = oldRange.upperBound - suffix + s
            }
        }
        let n = oldCount - prefix - suffix
        let m = newCount - prefix - suffix
        guard n > 0 && m > 0 else { return }
        // Myers while it costs less than hashing: its D steps cost about D²/2 tries and keep
        // about D²/2 numbers, hashing costs a few dozen tries per element (measured on 100k
        // distinct elements, 1% changed: Myers at D = 1,000 took 0.72 of the hashing path's
        // time). So up to D = √(8(n + m)) (at least 128), where D²/2 tries are half the budget
        // of eight tries per element; a diff predicted to need more gives up at step 128 as
        // before (see `myers`).
        let limit = max(128, Int((8 * Double(n + m)).squareRoot()))
        let budget = 8 * (n + m) + 128 * 128
        // Constants for the closures: a captured `var` is checked for exclusive access on every
        // read and write at run time (that was 40% of a small diff).
        let oldMiddle = oldStart + prefix
        let newMiddle = newStart + prefix
        let found = old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                origins.withUnsafeMutableBufferPointer { origins in
                    myers(n, m, limit: limit, budget: budget, { old[oldMiddle + $0] == new[newMiddle + $1] })
                    {
                        origins[newMiddle + $1] = oldMiddle + $0
                    }
                }
            }
        }
        let oldRest = oldMiddle..<(oldMiddle + n)
        let newRest = newMiddle..<(newMiddle + m)
        if found {
            pairMoves(&origins, old: old, new: new, in: oldRest, newRest)
        } else {
            greedyMatch(&origins, old: old, new: new, in: oldRest, newRest)
        }
    }

    /// Origins by identity, and which old indices were updated (content changed).
    @inlinable
    static func identifiedOrigins<Element: Equatable, ID: Hashable>(
        _ old: [Element], _ new: [Element], identifiedBy id: (Element) -> ID
    ) -> (origins: [Int], updated: [Bool]) {
        let origins = hashedOrigins(old.map(id), new.map(id))
        var updated = [Bool](repeating: false, count: old.count)
        for (position, origin) in origins.enumerated() where origin >= 0 && old[origin] != new[position] {
            updated[origin] = true
        }
        return (origins, updated)
    }

    /// Index pairs (old, new) of a longest common subsequence, ascending; `nil` when more than
    /// `limit` edits would be needed.
    @inlinable
    static func matches(_ oldCount: Int, _ newCount: Int, limit: Int, _ equal: (Int, Int) -> Bool)
        -> [(Int, Int)]?
    {
        var prefix = 0
        while prefix < oldCount && prefix < newCount && equal(prefix, prefix) { prefix += 1 }
        var suffix = 0
        while suffix < oldCount - prefix && suffix < newCount - prefix
            && equal(oldCount - 1 - suffix, newCount - 1 - suffix)
        {
            suffix += 1
        }
        let n = oldCount - prefix - suffix
        let m = newCount - prefix - suffix
        let start = prefix  // a constant for the closure (see `hashedOrigins`)
        var middle: [(Int, Int)] = []
        guard myers(n, m, limit: limit, { equal(start + $0, start + $1) }, { middle.append(($0, $1)) })
        else {
            return nil
        }
        var result: [(Int, Int)] = []
        result.reserveCapacity(prefix + middle.count + suffix)
        for i in 0..<prefix { result.append((i, i)) }
        for (i, j) in middle.reversed() { result.append((prefix + i, prefix + j)) }
        for s in 0..<suffix { result.append((oldCount - suffix + s, newCount - suffix + s)) }
        return result
    }

    /// Myers' greedy shortest edit script: calls `match` with each matched pair (old, new),
    /// last pair first, and returns `true`; `false` (no call) beyond `limit` edits. With a
    /// `budget`, also `false` once its work (steps tried plus elements compared) exceeds it, or
    /// as soon as the progress made predicts more than `limit` edits: at steps 128, 160, 192, …,
    /// d steps that covered a fraction f of the input predict d / f edits (for edits spread
    /// over it), so a diff far over the limit gives up after little work. What each step starts
    /// from is kept in one flat array, for the backtrack (see there).
    @inlinable @inline(__always)  // so that `equal` is inlined in its loop
    static func myers(
        _ n: Int, _ m: Int, limit: Int, budget: Int = .max, _ equal: (Int, Int) -> Bool,
        _ match: (Int, Int) -> Void
    ) -> Bool {
        var work = 0
        return myers(n, m, limit: limit, budget: budget, spent: &work, equal, match)
    }

    /// `myers`, adding its work (steps tried plus elements compared) to `spent`; with
    /// `predicts: false`, only the budget and the limit stop it (no prediction from its
    /// progress, which gives up at once when the edits are bunched at the start).
    @inlinable @inline(__always)
    static func myers(
        _ n: Int, _ m: Int, limit: Int, budget: Int, predicts: Bool = true, spent: inout Int,
        _ equal: (Int, Int) -> Bool, _ match: (Int, Int) -> Void
    ) -> Bool {
        if n == 0 || m == 0 { return true }
        let limit = min(n + m, limit)
        let offset = limit + 1
        var trace: [Int] = []
        let (steps, work) = withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * limit + 3) {
            v -> (Int?, Int) in
            v.initialize(repeating: 0)
            var work = 0
            for d in 0...limit {
                // What step d starts from: v[k] for k = -(d+1), -(d-1), …, d+1 (the only ones
                // this step and the backtrack read).
                var kept = -d - 1
                while kept <= d + 1 {
                    trace.append(v[offset + kept])
                    kept += 2
                }
                work += d + 1
                var k = -d
                while k <= d {
                    let at = offset + k
                    var x: Int
                    if k == -d || (k != d && v[at - 1] < v[at + 1]) {
                        x = v[at + 1]
                    } else {
                        x = v[at - 1] + 1
                    }
                    var y = x - k
                    let snake = x
                    while x < n && y < m && equal(x, y) {
                        x += 1
                        y += 1
                    }
                    work += x - snake
                    v[at] = x
                    if x >= n && y >= m { return (d + 1, work) }
                    k += 2
                }
                if work > budget { return (nil, work) }
                if predicts && budget < .max && d >= 128 && d % 32 == 0 {
                    // The furthest point reached: x + y on its diagonal.
                    var reached = 0
                    var k = -d
                    while k <= d {
                        reached = max(reached, 2 * v[offset + k] - k)
                        k += 2
                    }
                    if reached == 0 || d * (n + m) / reached > limit { return (nil, work) }
                }
            }
            return (nil, work)
        }
        spent += work
        guard let steps else { return false }
        backtrack(trace, steps: steps, n, m, match)
        return true
    }

    @inlinable
    static func backtrack(_ trace: [Int], steps: Int, _ n: Int, _ m: Int, _ match: (Int, Int) -> Void) {
        var x = n
        var y = m
        for d in stride(from: steps - 1, through: 0, by: -1) {
            // Step d keeps d + 2 values, for k = -(d+1), -(d-1), …, d+1, from index d(d + 3)/2;
            // the k read here are of that parity.
            let start = d * (d + 3) / 2
            func at(_ k: Int) -> Int { trace[start + (k + d + 1) / 2] }
            let k = x - y
            let previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1
            let previousX = d == 0 ? 0 : at(previousK)
            let previousY = d == 0 ? 0 : previousX - previousK
            while x > previousX && y > previousY {
                x -= 1
                y -= 1
                match(x, y)
            }
            x = previousX
            y = previousY
        }
    }

    @inlinable
    static func origins(_ matches: [(Int, Int)], newCount: Int) -> [Int] {
        var origins = [Int](repeating: -1, count: newCount)
        for (i, j) in matches { origins[j] = i }
        return origins
    }

    /// Pairs deleted and inserted elements that are equal (Equatable only: quadratic in the
    /// number of edits, so skipped when that would be large).
    @inlinable
    static func pairMoves(_ origins: inout [Int], oldCount: Int, _ equal: (Int, Int) -> Bool) {
        var used = [Bool](repeating: false, count: oldCount)
        for origin in origins where origin >= 0 { used[origin] = true }
        let deleted = (0..<oldCount).filter { !used[$0] }
        let inserted = origins.indices.filter { origins[$0] < 0 }
        guard !deleted.isEmpty, !inserted.isEmpty, deleted.count * inserted.count <= 1 << 18 else { return }
        var taken = [Bool](repeating: false, count: deleted.count)
        for position in inserted {
            for (i, old) in deleted.enumerated() where !taken[i] && equal(old, position) {
                taken[i] = true
                origins[position] = old
                break
            }
        }
    }

    /// Pairs the unmatched old elements of `oldRange` with unmatched new elements of `newRange`
    /// that are equal, in linear time.
    @inlinable
    static func pairMoves<Key: Hashable>(
        _ origins: inout [Int], old: [Key], new: [Key], in oldRange: Range<Int>, _ newRange: Range<Int>
    ) {
        var used = [Bool](repeating: false, count: oldRange.count)
        var inserted = 0
        origins.withUnsafeBufferPointer { origins in
            used.withUnsafeMutableBufferPointer { used in
                for position in newRange {
                    if origins[position] >= 0 {
                        used[origins[position] - oldRange.lowerBound] = true
                    } else {
                        inserted += 1
                    }
                }
            }
        }
        guard inserted > 0 else { return }
        let unmatched = used.withUnsafeBufferPointer { used in
            oldRange.filter { !used[$0 - oldRange.lowerBound] }
        }
        guard !unmatched.isEmpty else { return }
        var available = Chains(old, unmatched)
        for position in newRange where origins[position] < 0 {
            if let index = available.take(new[position], in: old) { origins[position] = index }
        }
    }

    /// Matches every new element of `newRange` to the first unused old element of `oldRange`
    /// with the same key.
    @inlinable
    static func greedyMatch<Key: Hashable>(
        _ origins: inout [Int], old: [Key], new: [Key], in oldRange: Range<Int>, _ newRange: Range<Int>
    ) {
        var available = Chains(old, oldRange)
        guard available.repeats else {
            // Every old key once: the only matching.
            for position in newRange {
                if let index = available.take(new[position], in: old) { origins[position] = index }
            }
            return
        }
        // Repeated elements: two matchings, the one with fewer changes kept. Each new element
        // takes the first unused equal old element (which suits equal elements moved or
        // inserted), or the first at or after where the matches so far continue (which keeps
        // the rest in place when some of many equal elements are deleted).
        var inOrder = available
        var first = [Int](repeating: -1, count: newRange.count)
        var lastMatched = -1
        var ordered = true
        for (offset, position) in newRange.enumerated() {
            guard let index = available.take(new[position], in: old) else { continue }
            first[offset] = index
            ordered = ordered && index > lastMatched
            lastMatched = index
        }
        // In order, the first matching makes no move: no matching does better (both match as
        // many elements).
        guard !ordered else {
            for (offset, position) in newRange.enumerated() where first[offset] >= 0 {
                origins[position] = first[offset]
            }
            return
        }
        if extendedMyers(&origins, old: old, new: new, in: oldRange, newRange) { return }
        var continuing = [Int](repeating: -1, count: newRange.count)
        var expected = oldRange.lowerBound
        for (offset, position) in newRange.enumerated() {
            guard let index = inOrder.take(new[position], atOrAfter: expected, in: old) else { continue }
            continuing[offset] = index
            expected = index + 1
        }
        let firstChanges = changes(first)
        let continuingChanges = changes(continuing)
        var (chosen, kept) =
            continuingChanges.count < firstChanges.count
            ? (continuing, continuingChanges.kept) : (first, firstChanges.kept)
        matchGaps(&chosen, kept: kept, old: old, new: new, in: oldRange, newRange)
        for (offset, position) in newRange.enumerated() where chosen[offset] >= 0 {
            origins[position] = chosen[offset]
        }
        // What the gaps left unmatched: equal elements paired into moves, as after Myers.
        pairMoves(&origins, old: old, new: new, in: oldRange, newRange)
    }

    /// Myers again, with more room, for repeated elements whose linear matching makes moves:
    /// up to 1,024 edits (a trace of at most 4 MB), within about 64 comparisons per element
    /// plus 16,384 (a shortest script is worth more there, as the linear matching is not one),
    /// with no prediction from its progress (edits bunched at the start would stop it at once).
    /// On success, writes the matches and pairs the rest into moves.
    @inlinable
    static func extendedMyers<Key: Hashable>(
        _ origins: inout [Int], old: [Key], new: [Key], in oldRange: Range<Int>, _ newRange: Range<Int>
    ) -> Bool {
        let n = oldRange.count
        let m = newRange.count
        let oldStart = oldRange.lowerBound
        let newStart = newRange.lowerBound
        var work = 0
        let found = old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                origins.withUnsafeMutableBufferPointer { origins in
                    myers(
                        n, m, limit: 1_024, budget: 64 * (n + m) + 128 * 128, predicts: false, spent: &work,
                        { old[oldStart + $0] == new[newStart + $1] }
                    ) {
                        origins[newStart + $1] = oldStart + $0
                    }
                }
            }
        }
        guard found else { return false }
        pairMoves(&origins, old: old, new: new, in: oldRange, newRange)
        return true
    }

    /// Improves a matching of repeated elements that makes moves: keeps its longest in-order
    /// part as anchors, unmatches the rest, and matches each gap between consecutive anchors
    /// (old and new elements between them) by a shortest script of its own: an exact table for
    /// a small or narrow gap, else Myers within a shared budget of about 8 comparisons per
    /// element (a gap past it, or whose size difference alone would exceed it, stays
    /// unmatched). The caller pairs what is left into moves. As every matching
    /// the caller makes pairs as many elements of each key, and the anchors and the gaps'
    /// matches stay in order, the result never has more changes than `matching`.
    /// `kept` marks a longest in-order part of `matching` (`ArrayChangeset.longestIncreasingRun`).
    @inlinable
    static func matchGaps<Key: Hashable>(
        _ matching: inout [Int], kept: [Bool], old: [Key], new: [Key], in oldRange: Range<Int>,
        _ newRange: Range<Int>
    ) {
        var moved = false
        for offset in matching.indices where matching[offset] >= 0 && !kept[offset] {
            matching[offset] = -1
            moved = true
        }
        guard moved else { return }
        var budget = 8 * (oldRange.count + newRange.count) + 128 * 128
        var oldStart = oldRange.lowerBound
        var newStart = 0
        let newBase = newRange.lowerBound
        for offset in 0...matching.count {
            let oldEnd = offset < matching.count ? matching[offset] : oldRange.upperBound
            guard oldEnd >= 0 else { continue }
            let n = oldEnd - oldStart
            let m = offset - newStart
            if n > 0 && m > 0 {
                let oldGap = oldStart
                let newGap = newStart
                if n * m <= max(4_096, 16 * (n + m)) {
                    // Small, or narrow (a side of at most about 16): the table costs little.
                    shortestScript(
                        n, m, { old[oldGap + $0] == new[newBase + newGap + $1] },
                        { matching[newGap + $1] = oldGap + $0 })
                } else if (n - m) * (n - m) / 2 < budget {
                    // Myers takes at least |n - m| steps, about (n - m)²/2 tries: only when they fit.
                    var work = 0
                    _ = myers(
                        n, m, limit: n + m, budget: budget, predicts: false, spent: &work,
                        { old[oldGap + $0] == new[newBase + newGap + $1] },
                        { matching[newGap + $1] = oldGap + $0 })
                    budget -= work
                }
            }
            oldStart = oldEnd + 1
            newStart = offset + 1
        }
    }

    /// A shortest script between two short ranges, by the classic table of common subsequence
    /// lengths: calls `match` with each matched pair (old, new), last pair first.
    /// - Complexity: O(n·m) time and memory.
    @inlinable
    static func shortestScript(
        _ n: Int, _ m: Int, _ equal: (Int, Int) -> Bool, _ match: (Int, Int) -> Void
    ) {
        let width = m + 1
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: (n + 1) * width) { table in
            table.initialize(repeating: 0)
            for x in 0..<n {
                for y in 0..<m {
                    table[(x + 1) * width + y + 1] =
                        equal(x, y)
                        ? table[x * width + y] + 1
                        : max(table[x * width + y + 1], table[(x + 1) * width + y])
                }
            }
            var x = n
            var y = m
            while x > 0 && y > 0 {
                if equal(x - 1, y - 1) {
                    x -= 1
                    y -= 1
                    match(x, y)
                } else if table[(x - 1) * width + y] >= table[x * width + y - 1] {
                    x -= 1
                } else {
                    y -= 1
                }
            }
        }
    }

    /// How many changes a matching of a range of `new` makes, less the difference of the two
    /// ranges' counts (the same for every matching of them): each new element left unmatched
    /// is an insert and leaves one more delete, each matched one out of order is a move.
    /// Also returns the matched elements it keeps in place (a longest in-order part).
    @inlinable
    static func changes(_ matching: [Int]) -> (count: Int, kept: [Bool]) {
        var matched = 0
        for origin in matching where origin >= 0 { matched += 1 }
        let kept = ArrayChangeset.longestIncreasingRun(matching)
        let inPlace = kept.lazy.filter { $0 }.count
        return (2 * (matching.count - matched) + (matched - inPlace), kept)
    }

    /// For each key, the old indices holding it, in order, as linked chains in an
    /// open-addressing hash table: each element is hashed once, and a slot holds the hash, an
    /// index with that key (to compare keys) and the first unused index (-1: all used).
    @usableFromInline
    struct Chains<Key: Hashable> {
        @usableFromInline var slotHash: [Int]
        @usableFromInline var slotKey: [Int]
        @usableFromInline var slotHead: [Int]
        @usableFromInline var next: [Int]
        /// Per slot, the unused indices `take(_:atOrAfter:in:)` passed over (linked through
        /// `next`, ascending): first and last. Only for keys held by several old elements.
        @usableFromInline var passed: [Int: (first: Int, last: Int)] = [:]
        /// Whether a key is held by several old elements.
        @usableFromInline var repeats = false
        @usableFromInline let mask: Int
        @usableFromInline let base: Int

        @inlinable
        init(_ old: [Key], _ indices: Range<Int>) {
            self.init(old, indices, count: indices.count, base: indices.lowerBound, upper: indices.upperBound)
            for index in indices.reversed() { add(old, index) }
        }

        @inlinable
        init(_ old: [Key], _ indices: [Int]) {
            let base = indices.first ?? 0
            self.init(old, indices, count: indices.count, base: base, upper: (indices.last ?? base - 1) + 1)
            for index in indices.reversed() { add(old, index) }
        }

        @inlinable
        init(_ old: [Key], _ indices: some Collection<Int>, count: Int, base: Int, upper: Int) {
            var capacity = 8
            while capacity < 2 * count { capacity <<= 1 }
            mask = capacity - 1
            self.base = base
            slotHash = [Int](repeating: 0, count: capacity)
            slotKey = [Int](repeating: -1, count: capacity)
            slotHead = [Int](repeating: -1, count: capacity)
            next = [Int](repeating: -1, count: max(0, upper - base))
        }

        /// The slot of `key` (hash `hash`), or the empty slot where it would go.
        @inlinable
        func slot(of key: Key, hash: Int, in old: [Key]) -> Int {
            var slot = hash & mask
            while slotKey[slot] >= 0 {
                if slotHash[slot] == hash && old[slotKey[slot]] == key { return slot }
                slot = (slot + 1) & mask
            }
            return slot
        }

        @inlinable
        mutating func add(_ old: [Key], _ index: Int) {
            let key = old[index]
            let hash = key.hashValue
            let slot = slot(of: key, hash: hash, in: old)
            if slotKey[slot] < 0 {
                slotHash[slot] = hash
                slotKey[slot] = index
            } else {
                next[index - base] = slotHead[slot]
                repeats = true
            }
            slotHead[slot] = index
        }

        /// The first unused old index holding `key` at or after `start` among those no call has
        /// passed over yet, else the first one passed over (the first unused); now used. Indices
        /// passed over (below `start`) move to the slot's `passed` list (ascending: they leave
        /// the chain from its front), each once, so a call costs O(1) amortized; a later call
        /// with a lower `start` does not look for them there. Not to be mixed with
        /// `take(_:in:)` on one value.
        @inlinable
        mutating func take(_ key: Key, atOrAfter start: Int, in old: [Key]) -> Int? {
            let slot = slot(of: key, hash: key.hashValue, in: old)
            var index = slotHead[slot]
            while index >= 0 && index < start {
                let following = next[index - base]
                next[index - base] = -1
                if let list = passed[slot] {
                    next[list.last - base] = index
                    passed[slot] = (list.first, index)
                } else {
                    passed[slot] = (index, index)
                }
                index = following
            }
            slotHead[slot] = index
            if index >= 0 {
                slotHead[slot] = next[index - base]
                return index
            }
            // None at or after `start`: the first one passed over, the first unused.
            guard let list = passed[slot] else { return nil }
            let following = next[list.first - base]
            passed[slot] = following >= 0 ? (following, list.last) : nil
            return list.first
        }

        /// The first unused old index holding `key`, now used.
        @inlinable
        mutating func take(_ key: Key, in old: [Key]) -> Int? {
            let slot = slot(of: key, hash: key.hashValue, in: old)
            let index = slotHead[slot]
            guard index >= 0 else { return nil }
            slotHead[slot] = next[index - base]
            return index
        }
    }
}
