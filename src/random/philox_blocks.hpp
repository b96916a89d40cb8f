#pragma once
// Philox4x32-10 for runs of consecutive counters, and the two Box–Muller uniforms of
// each block, and the ziggurat's fast path (the internal interface of src/random/).
#include <cstddef>
#include <cstdint>

namespace headspec::detail {

/// Key and the three counter words shared by a run of blocks; word 0 is the block index.
struct PhiloxStream {
  uint32_t k0, k1, c1, c2, c3;
};

/// Blocks per call of the vectorised kernel; runs are processed in whole batches of it
/// where possible, so a run's length only changes which path computes a block, never its bits.
inline constexpr std::size_t kPhiloxBatch = 16;

/// out[4i + j] = word j of block c0 + i, i < n.
void philox_words(const PhiloxStream& s, uint32_t c0, std::size_t n, uint32_t* out);

/// For block c0 + i (words r0..r3), i < n: the 64-bit words w0 = r0·2^32 + r1 and
/// w1 = r2·2^32 + r3 as u[i] = u01(w0) ∈ (0, 1] and v[i] = uneg11(w1) ∈ [−1, 1], exactly
/// Random123's r123::u01<double> and r123::uneg11<double> (uniform.hpp).
void philox_uniform_pairs(const PhiloxStream& s, uint32_t c0, std::size_t n, double* u, double* v);

/// out[i] = (w + 0.5)·2^-53 with w the top 53 bits of w0 (even i) or w1 (odd i) of
/// block c0 + i/2, i < 2n: uniforms in the open interval (0, 1).
void philox_open_uniforms(const PhiloxStream& s, uint32_t c0, std::size_t n, double* out);

/// Bits of a ziggurat word that choose the layer (ziggurat.hpp); the next bit is the sign.
inline constexpr int kZigguratBits = 10;

/// The ziggurat's fast path (ziggurat.hpp, ziggurat_fast) for blocks c0 + i, i < n ≤ 64:
/// a[i] from w0 and b[i] from w1 of block c0 + i; bit i of reject[0] (of reject[1]) is set,
/// and a[i] (b[i]) holds the bits of the word instead, when its first attempt is not
/// accepted at once.
/// x_table is ZigguratTables::x. reject[] is overwritten.
void ziggurat_blocks(const PhiloxStream& s, uint32_t c0, std::size_t n, const double* x_table, double* a, double* b,
                     uint64_t* reject);

/// ziggurat_blocks for the kPhiloxBatch blocks c0 .. c0 + 15 and, in the same pass,
/// philox_open_uniforms for blocks u0 .. u0 + 3 of the stream with counter word 1
/// replaced by uniform_c1 (8 numbers): the first refills of a StreamChunk::Batch stream,
/// whose normal and uniform sub-lanes differ only in that word. The same bits as the two calls.
void ziggurat_blocks_with_uniforms(const PhiloxStream& s, uint32_t c0, const double* x_table, double* a, double* b,
                                   uint64_t* reject, uint32_t uniform_c1, uint32_t u0, double* uniforms);

/// AVX-512F versions (philox_avx512.cpp): each does the longest prefix of whole batches
/// of 32 blocks and returns its length. Call only when avx512_available().
std::size_t philox_words_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, uint32_t* out);
std::size_t philox_uniform_pairs_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, double* u, double* v);
std::size_t philox_open_uniforms_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, double* out);
/// Sets the reject bits of the blocks it does (n ≤ 64) and clears no others.
std::size_t ziggurat_blocks_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, const double* x_table, double* a,
                                   double* b, uint64_t* reject);
/// Whether the processor running this has AVX-512F (checked once).
bool avx512_available();

}  // namespace headspec::detail
