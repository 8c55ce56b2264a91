// Bytes in use according to the allocator, for the memory scenario.

import CMallocStats

enum MallocStats {
    /// Whether this platform's allocator reports bytes in use (glibc).
    static var available: Bool { og_malloc_stats_available() != 0 }

    /// Bytes allocated through malloc right now, heap and mmap together.
    static func bytesInUse() -> Int { Int(og_malloc_bytes_in_use()) }
}
