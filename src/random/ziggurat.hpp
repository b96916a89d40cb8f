#pragma once
// The 1024-layer ziggurat for N(0,1) (Marsaglia & Tsang, J. Stat. Softw. 5(8), 2000), exact in
// distribution up to double rounding: equal-area layers computed in extended precision,
// exact wedge tests with exp, Marsaglia's exact tail beyond r.
//
// A 64-bit word w drives one attempt: layer i = w mod 1024 (bits 0–9), sign = bit 10, and the
// top 53 bits as U = (w >> 11)·2^-53 ∈ [0, 1); x = U·X[i] is accepted at once when
// x < X[i+1] (99.6% of words). Otherwise the attempt is finished, and further attempts are drawn,
// by the scalar slow path from the value's own secondary Philox blocks (see normal.cpp).
#include <cstdint>

#include "philox_blocks.hpp"

namespace headspec::detail {

inline constexpr int kZigLayers = 1 << kZigguratBits;

struct ZigguratTables {
  double x[kZigLayers + 1];  ///< X[0] = v/f(r) > X[1] = r > … > X[1023] > X[1024] = 0
  double f[kZigLayers + 1];  ///< f(X[i]) = exp(−X[i]²/2); f[1024] = 1
  double r;                  ///< start of the tail
};

/// The tables, computed once (thread-safe) by the same scalar code on every path.
const ZigguratTables& ziggurat_tables();

/// The value of the word's first attempt if it is accepted at once, as the vector paths
/// compute it; sets *rejected otherwise.
inline double ziggurat_fast(const ZigguratTables& t, uint64_t w, bool* rejected) {
  const unsigned i = static_cast<unsigned>(w & (kZigLayers - 1));
  const double x = static_cast<double>(w >> 11) * 0x1.0p-53 * t.x[i];
  *rejected = !(x < t.x[i + 1]);
  return (w >> kZigguratBits) & 1 ? -x : x;
}

}  // namespace headspec::detail
