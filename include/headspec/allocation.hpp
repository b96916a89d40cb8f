#pragma once
// The process's allocation policy (docs/performance.md, "Memory allocation").

namespace headspec {

/// Keeps freed memory in the process instead of giving it back to the system at once: blocks
/// up to 64 MiB come from the heap (not mmap) and the heap's top is trimmed only past 256 MiB
/// free. Called once by the program and by the Python module when they start.
void retain_freed_memory();

}  // namespace headspec
