// Malloc statistics for the memory scenario. glibc's mallinfo2() is not visible from Swift's
// Glibc module, so this tiny C target forwards it.
#ifndef OBSERVERGRAPH_BENCHMARKS_CMALLOCSTATS_H
#define OBSERVERGRAPH_BENCHMARKS_CMALLOCSTATS_H

#include <stddef.h>
#include <stdlib.h>

/// Whether the platform's allocator reports bytes in use (glibc only).
int og_malloc_stats_available(void);

/// Bytes currently allocated through malloc, heap and mmap together:
/// mallinfo2().uordblks + mallinfo2().hblkhd. Zero where unavailable.
size_t og_malloc_bytes_in_use(void);

#endif
