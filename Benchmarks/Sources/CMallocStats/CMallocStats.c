#include "CMallocStats.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int og_malloc_stats_available(void) {
#if defined(__GLIBC__)
    return 1;
#else
    return 0;
#endif
}

size_t og_malloc_bytes_in_use(void) {
#if defined(__GLIBC__)
    // uordblks: bytes in chunks handed out from the heap arenas (all arenas, chunk headers
    // included). hblkhd: bytes in chunks glibc served with mmap, which is where large buffers
    // (a registry's slot array or hash table at a million entries) go. Counting only uordblks
    // would miss them.
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}
