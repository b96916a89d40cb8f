#pragma once
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) over
// runs of consecutive counters, several blocks at a time. Bit-identical to Random123's
// r123::Philox4x32 on every build: the AVX2 and AVX-512 paths only reorder exact integer
// arithmetic.
#include <cstddef>
#include <cstdint>

namespace headspec {

/// Block i < n has counter (c0 + i mod 2^32, c1, c2, c3) and key (k0, k1);
/// out[4i + j] = word j of its output.
void philox4x32_10(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, std::size_t n,
                   uint32_t* out);

/// The widest path this build takes on this processor: "avx512f" (32 blocks at a time,
/// chosen at run time), "avx2" (16 blocks; x86-64-v3 builds) or "scalar" (Random123's own).
/// Runs are split into whole batches of the widest path, then narrower ones, then single
/// blocks; every path gives the same bits.
const char* philox_instruction_set();

}  // namespace headspec
