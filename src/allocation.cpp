#include "headspec/allocation.hpp"

#include <malloc.h>

namespace headspec {

// glibc serves blocks above its mmap threshold (128 KiB, raised to the largest block freed so
// far) by mmap and gives the heap's top back once twice that is free. The laplace quadrature
// allocates and frees matrices of a few hundred KiB at every evaluation, so each one faulted
// its pages in anew: 3–4 times the evaluation's cost in the Fig. 1 model (43 against 12 ms
// on one thread, docs/performance.md). The memory kept is what the largest evaluation holds.
void retain_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace headspec
