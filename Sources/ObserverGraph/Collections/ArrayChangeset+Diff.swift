// Diffing two arrays into an `ArrayChangeset`.
//
// Algorithm: after trimming the common prefix and suffix, Myers' O((N+M)·D) algorithm finds a
// shortest script of deletes and inserts (N, M: lengths of the trimmed arrays; D: number of
// deletes plus inserts). Its time is near-linear when few elements change, and its memory is
// O(D²). Then a deleted and an inserted element that are equal are paired into a move, and the
// pairs that keep their relative order stay in place (a longest increasing run), so the number
// of moves is minimal too. When D would exceed `maximumMinimalEdits`, a linear matching of equal
// elements (Hashable) or a reload (Equatable only) is used instead: valid, not minimal.

extension ArrayChangeset {
    /// Above this many deletes plus inserts, diffing stops looking for the shortest script.
    public static let maximumMinimalEdits = 2_048

    /// The changeset that turns `old` into `new`, with the fewest deletes and inserts, and with
    /// equal elements that changed place reported as moves.
    ///
    ///     ArrayChangeset.diff(from: [1, 2, 3], to: [0, 1, 3, 4])   // deletes [1], inserts [0, 3]
    ///
    /// Thread safety: pure. Callbacks: `==` of `Element`.
    /// - Complexity: O((N + M)·D) time and O(D²) memory, D = deletes + inserts; see
    ///   `maximumMinimalEdits` for large D.
    public static func diff<Element: Equatable>(from old: [Element], to new: [Element]) -> ArrayChangeset {
        let matches = ArrayDiff.matches(old.count, new.count) { old[$0] == new[$1] }
        guard let matches else { return .reload(oldCount: old.count, newCount: new.count) }
        var origins = ArrayDiff.origins(matches, newCount: new.count)
        ArrayDiff.pairMoves(&origins, oldCount: old.count) { old[$0] == new[$1] }
        return fromOrigins(origins, oldCount: old.count)
    }

    /// The same, for hashable elements: moves are paired in linear time, and a very large
    /// difference falls back to a linear matching instead of a reload.
    ///
    /// Thread safety: pure. Callbacks: `==` and `hash(into:)` of `Element`.
    /// - Complexity: O((N + M)·D) time, O(D² + N + M) memory.
    public static func diff<Element: Hashable>(from old: [Element], to new: [Element]) -> ArrayChangeset {
        let origins: [Int?]
        if let matches = ArrayDiff.matches(old.count, new.count, { old[$0] == new[$1] }) {
            var matched = ArrayDiff.origins(matches, newCount: new.count)
            ArrayDiff.pairMoves(&matched, old: old, new: new, key: { $0 })
            origins = matched
        } else {
            origins = ArrayDiff.greedyOrigins(old: old, new: new, key: { $0 })
        }
        return fromOrigins(origins, oldCount: old.count)
    }

    /// The changeset between two arrays of elements with a stable identity: elements are matched
    /// by `id`; a matched element whose value changed is an update (or, if it also moved, a delete
    /// plus an insert). Use it for model objects that change while keeping their identity.
    ///
    /// Identities should be unique within each array; duplicates are matched in order.
    ///
    /// Thread safety: pure. Callbacks: `id`, and `==` of `Element`.
    /// - Complexity: O((N + M)·D) time, O(D² + N + M) memory.
    public static func diff<Element: Equatable, ID: Hashable>(
        from old: [Element], to new: [Element], identifiedBy id: (Element) -> ID
    ) -> ArrayChangeset {
        let oldIDs = old.map(id)
        let newIDs = new.map(id)
        let origins: [Int?]
        if let matches = ArrayDiff.matches(old.count, new.count, { oldIDs[$0] == newIDs[$1] }) {
            var matched = ArrayDiff.origins(matches, newCount: new.count)
            ArrayDiff.pairMoves(&matched, old: oldIDs, new: newIDs, key: { $0 })
            origins = matched
        } else {
            origins = ArrayDiff.greedyOrigins(old: oldIDs, new: newIDs, key: { $0 })
        }
        var updated = Set<Int>()
        for (position, origin) in origins.enumerated() {
            if let origin, old[origin] != new[position] { updated.insert(origin) }
        }
        return fromOrigins(origins, oldCount: old.count, updated: updated)
    }
}

enum ArrayDiff {
    /// Index pairs (old, new) of a longest common subsequence, ascending; `nil` when more than
    /// `ArrayChangeset.maximumMinimalEdits` edits would be needed.
    static func matches(_ oldCount: Int, _ newCount: Int, _ equal: (Int, Int) -> Bool) -> [(Int, Int)]? {
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
        guard let middle = myers(n, m, { equal(prefix + $0, prefix + $1) }) else { return nil }
        var result: [(Int, Int)] = []
        result.reserveCapacity(prefix + middle.count + suffix)
        for i in 0..<prefix { result.append((i, i)) }
        for (i, j) in middle { result.append((prefix + i, prefix + j)) }
        for s in 0..<suffix { result.append((oldCount - suffix + s, newCount - suffix + s)) }
        return result
    }

    /// Myers' greedy shortest edit script, returning the matched pairs.
    private static func myers(_ n: Int, _ m: Int, _ equal: (Int, Int) -> Bool) -> [(Int, Int)]? {
        if n == 0 || m == 0 { return [] }
        let limit = min(n + m, ArrayChangeset.maximumMinimalEdits)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        // trace[d] holds v[k] for k in -(d+1)...(d+1) as it was before step d.
        var trace: [[Int]] = []
        for d in 0...limit {
            trace.append(Array(v[(offset - d - 1)...(offset + d + 1)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x: Int
                if k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) {
                    x = v[offset + k + 1]
                } else {
                    x = v[offset + k - 1] + 1
                }
                var y = x - k
                while x < n && y < m && equal(x, y) {
                    x += 1
                    y += 1
                }
                v[offset + k] = x
                if x >= n && y >= m { return backtrack(trace, n, m) }
            }
        }
        return nil
    }

    private static func backtrack(_ trace: [[Int]], _ n: Int, _ m: Int) -> [(Int, Int)] {
        var x = n
        var y = m
        var pairs: [(Int, Int)] = []
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let v = trace[d]
            func at(_ k: Int) -> Int { v[k + d + 1] }
            let k = x - y
            let previousK = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1
            let previousX = d == 0 ? 0 : at(previousK)
            let previousY = d == 0 ? 0 : previousX - previousK
            while x > previousX && y > previousY {
                x -= 1
                y -= 1
                pairs.append((x, y))
            }
            x = previousX
            y = previousY
        }
        return pairs.reversed()
    }

    static func origins(_ matches: [(Int, Int)], newCount: Int) -> [Int?] {
        var origins = [Int?](repeating: nil, count: newCount)
        for (i, j) in matches { origins[j] = i }
        return origins
    }

    /// Pairs deleted and inserted elements that are equal (Equatable only: quadratic in the
    /// number of edits, so skipped when that would be large).
    static func pairMoves(_ origins: inout [Int?], oldCount: Int, _ equal: (Int, Int) -> Bool) {
        var used = [Bool](repeating: false, count: oldCount)
        for case let origin? in origins { used[origin] = true }
        let deleted = (0..<oldCount).filter { !used[$0] }
        let inserted = origins.indices.filter { origins[$0] == nil }
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

    /// Pairs deleted and inserted elements with equal keys, in linear time.
    static func pairMoves<Element, Key: Hashable>(
        _ origins: inout [Int?], old: [Element], new: [Element], key: (Element) -> Key
    ) {
        var used = [Bool](repeating: false, count: old.count)
        for case let origin? in origins { used[origin] = true }
        var unmatched: [Key: [Int]] = [:]
        for index in old.indices.reversed() where !used[index] {
            unmatched[key(old[index]), default: []].append(index)
        }
        guard !unmatched.isEmpty else { return }
        for position in origins.indices where origins[position] == nil {
            if let old = unmatched[key(new[position])]?.popLast() { origins[position] = old }
        }
    }

    /// Matches every new element to the first unused old element with the same key.
    static func greedyOrigins<Element, Key: Hashable>(old: [Element], new: [Element], key: (Element) -> Key)
        -> [Int?]
    {
        var available: [Key: [Int]] = [:]
        for index in old.indices.reversed() { available[key(old[index]), default: []].append(index) }
        return new.map { available[key($0)]?.popLast() }
    }
}
