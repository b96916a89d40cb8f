// Philox4x32-10 over runs of consecutive counters. The scalar path is Random123 itself; with
// AVX2 (x86-64-v3 builds), 16 blocks go through the rounds together: word j of four blocks
// sits in the low halves of the 64-bit lanes of one register, so that one vpmuludq forms
// four of the 32×32→64-bit products of a round (Random123 philox.h, _philox4x32round).
// Only exact integer arithmetic is reordered, and the integer → double conversions are
// done in two exact halves, so both paths give the same bits.
#include "philox_blocks.hpp"

#include <Random123/philox.h>
#include <Random123/uniform.hpp>

#include <algorithm>
#include <cstring>

#include "headspec/philox.hpp"
#include "ziggurat.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace headspec::detail {
namespace {

using Philox = r123::Philox4x32;

inline Philox::ctr_type scalar_block(const PhiloxStream& s, uint32_t c0) {
  return Philox()(Philox::ctr_type{{c0, s.c1, s.c2, s.c3}}, Philox::key_type{{s.k0, s.k1}});
}

inline double open_uniform(uint64_t w) {
  // (top 53 bits + ½)·2^-53; the sum rounds up to 2^53 only for w ≥ 2^64 − 2^10, which is
  // clamped to the largest double below 1 so that the interval stays open.
  return std::min((double(w >> 11) + 0.5) * 0x1.0p-53, 0x1.fffffffffffffp-1);
}

// Scalar path for blocks [c0, c0 + n).
template <class Sink>
void scalar_blocks(const PhiloxStream& s, uint32_t c0, std::size_t n, Sink sink) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = scalar_block(s, c0 + static_cast<uint32_t>(i));
    sink(i, r[0], r[1], r[2], r[3]);
  }
}

#if defined(__AVX2__)

// Registers per word: four independent chains hide the multiplier's latency (measured
// best of 1–4 in bench_random's terms; more would spill).
constexpr int kVecs = kPhiloxBatch / 4;

// The ten rounds for blocks c0 .. c0 + kPhiloxBatch − 1, then sink(v, r0, r1, r2, r3) with the
// words of blocks c0 + 4v .. c0 + 4v + 3 in the low halves of the lanes (high halves zero).
// Upper lane halves carry garbage between rounds (vpmuludq reads only the low halves).
// Every loop is unrolled so that the state stays in registers.
// The ten rounds from the counters (x0[v] + lane, x1[v], c2, c3) of register v, then sink
// as below; rounds() and the fused draw of ziggurat_blocks_with_uniforms start from it.
template <int Vecs, class Sink>
inline void rounds_from(uint32_t k0, uint32_t k1, __m256i* x0, __m256i* x1, __m256i* x2, __m256i* x3, Sink sink) {
  const __m256i m0 = _mm256_set1_epi64x(PHILOX_M4x32_0), m1 = _mm256_set1_epi64x(PHILOX_M4x32_1);
#pragma GCC unroll 10
  for (int r = 0; r < 10; ++r) {
    const __m256i key0 = _mm256_set1_epi64x(k0), key1 = _mm256_set1_epi64x(k1);
#pragma GCC unroll 8
    for (int v = 0; v < Vecs; ++v) {
      const __m256i p0 = _mm256_mul_epu32(x0[v], m0);  // hi0:lo0 = M0·ctr0
      const __m256i p1 = _mm256_mul_epu32(x2[v], m1);  // hi1:lo1 = M1·ctr2
      // out = (hi1 ^ ctr1 ^ key0, lo1, hi0 ^ ctr3 ^ key1, lo0)
      x0[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), x1[v]), key0);
      x2[v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), x3[v]), key1);
      x1[v] = p1;
      x3[v] = p0;
    }
    k0 += PHILOX_W32_0;  // the key schedule (_philox4x32bumpkey)
    k1 += PHILOX_W32_1;
  }
  const __m256i low = _mm256_set1_epi64x(0xFFFFFFFF);
#pragma GCC unroll 8
  for (int v = 0; v < Vecs; ++v)
    sink(v, _mm256_and_si256(x0[v], low), _mm256_and_si256(x1[v], low), _mm256_and_si256(x2[v], low),
         _mm256_and_si256(x3[v], low));
}

// Vecs < kVecs does blocks c0 .. c0 + 4·Vecs − 1 (the short runs of philox_open_uniforms).
template <int Vecs = kVecs, class Sink>
inline void rounds(const PhiloxStream& s, uint32_t c0, Sink sink) {
  __m256i x0[Vecs], x1[Vecs], x2[Vecs], x3[Vecs];
  const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
#pragma GCC unroll 8
  for (int v = 0; v < Vecs; ++v) {
    x0[v] = _mm256_add_epi32(_mm256_set1_epi64x(c0 + 4u * static_cast<uint32_t>(v)), lane);
    x1[v] = _mm256_set1_epi64x(s.c1);
    x2[v] = _mm256_set1_epi64x(s.c2);
    x3[v] = _mm256_set1_epi64x(s.c3);
  }
  rounds_from<Vecs>(s.k0, s.k1, x0, x1, x2, x3, sink);
}

// Exact double of an unsigned 32-bit value in each lane: 2^52 + x has x in its mantissa.
inline __m256d to_double_u32(__m256i x) {
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000);
  return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, magic)), _mm256_set1_pd(0x1.0p52));
}
// Exact double of the lanes read as signed 32-bit values.
inline __m256d to_double_i32(__m256i x) {
  const __m256i flipped = _mm256_xor_si256(x, _mm256_set1_epi64x(0x80000000));
  return _mm256_sub_pd(to_double_u32(flipped), _mm256_set1_pd(0x1.0p31));
}
// hi·2^32 + lo: both terms are exact, so the one rounding of the sum is the correctly
// rounded conversion of the 64-bit integer, as the scalar cvtsi2sd gives.
inline __m256d join(__m256d hi, __m256d lo) { return _mm256_add_pd(_mm256_mul_pd(hi, _mm256_set1_pd(0x1.0p32)), lo); }


// The ziggurat's fast path for the words hi·2^32 + lo of four blocks (ziggurat.hpp): the
// values to out[0..3], and the words themselves where the first attempt is not accepted,
// whose bits are set in *rej from bit `shift`.
inline void ziggurat_word(__m256i hi, __m256i lo, const double* x_table, double* out, uint64_t* rej, std::size_t shift) {
  const __m256i layer = _mm256_and_si256(lo, _mm256_set1_epi64x((1 << kZigguratBits) - 1));
  const __m256i sign = _mm256_and_si256(_mm256_slli_epi64(lo, 63 - kZigguratBits), _mm256_set1_epi64x(INT64_MIN));
  const __m256d u = _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(to_double_u32(hi), _mm256_set1_pd(0x1.0p21)),
                                                to_double_u32(_mm256_srli_epi64(lo, 11))),
                                  _mm256_set1_pd(0x1.0p-53));
  const __m256d x = _mm256_mul_pd(u, _mm256_i64gather_pd(x_table, layer, 8));
  const __m256d ok = _mm256_cmp_pd(x, _mm256_i64gather_pd(x_table + 1, layer, 8), _CMP_LT_OQ);
  const __m256d w = _mm256_castsi256_pd(_mm256_or_si256(_mm256_slli_epi64(hi, 32), lo));  // for the slow path
  _mm256_storeu_pd(out, _mm256_blendv_pd(w, _mm256_castsi256_pd(_mm256_xor_si256(_mm256_castpd_si256(x), sign)), ok));
  *rej |= uint64_t(~_mm256_movemask_pd(ok) & 15) << shift;
}

// Open uniforms (0, 1) of the words hi·2^32 + lo of four blocks, as open_uniform():
// w >> 11 = r_hi·2^21 + (r_lo >> 11) < 2^53 is exact, as is its scalar conversion.
inline __m256d open_uniforms4(__m256i hi, __m256i lo) {
  const __m256d h = _mm256_add_pd(_mm256_mul_pd(to_double_u32(hi), _mm256_set1_pd(0x1.0p21)), to_double_u32(_mm256_srli_epi64(lo, 11)));
  return _mm256_min_pd(_mm256_mul_pd(_mm256_add_pd(h, _mm256_set1_pd(0.5)), _mm256_set1_pd(0x1.0p-53)),
                       _mm256_set1_pd(0x1.fffffffffffffp-1));
}

#endif

}  // namespace

bool avx512_available() {
#if defined(__x86_64__) && defined(HEADSPEC_HAVE_AVX512_PHILOX)
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

// Each function takes the widest path for as many whole batches as it can, then narrower
// ones; since every path gives the same bits, which one computes a block does not matter.
void philox_words(const PhiloxStream& s, uint32_t c0, std::size_t n, uint32_t* out) {
  std::size_t i = 0;
#if defined(HEADSPEC_HAVE_AVX512_PHILOX)
  if (avx512_available()) i = philox_words_avx512(s, c0, n, out);
#endif
#if defined(__AVX2__)
  for (; i + kPhiloxBatch <= n; i += kPhiloxBatch) {
    alignas(32) uint64_t tmp[4][kPhiloxBatch];
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int v, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp[0] + 4 * v), r0);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp[1] + 4 * v), r1);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp[2] + 4 * v), r2);
      _mm256_store_si256(reinterpret_cast<__m256i*>(tmp[3] + 4 * v), r3);
    });
    for (std::size_t b = 0; b < kPhiloxBatch; ++b)
      for (int j = 0; j < 4; ++j) out[4 * (i + b) + j] = static_cast<uint32_t>(tmp[j][b]);
  }
#endif
  scalar_blocks(s, c0 + static_cast<uint32_t>(i), n - i, [&](std::size_t b, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    uint32_t* o = out + 4 * (i + b);
    o[0] = r0;
    o[1] = r1;
    o[2] = r2;
    o[3] = r3;
  });
}

void philox_uniform_pairs(const PhiloxStream& s, uint32_t c0, std::size_t n, double* u, double* v) {
  std::size_t i = 0;
#if defined(HEADSPEC_HAVE_AVX512_PHILOX)
  if (avx512_available()) i = philox_uniform_pairs_avx512(s, c0, n, u, v);
#endif
#if defined(__AVX2__)
  for (; i + kPhiloxBatch <= n; i += kPhiloxBatch) {
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
      // u01: w·2^-64 + 2^-65; uneg11: (signed w)·2^-63 + 2^-64 (Random123 uniform.hpp). The
      // products are exact, so fused or not, the one rounding is that of the addition.
      const __m256d w0 = join(to_double_u32(r0), to_double_u32(r1));
      const __m256d w1 = join(to_double_i32(r2), to_double_u32(r3));
      _mm256_storeu_pd(u + i + 4 * k, _mm256_add_pd(_mm256_mul_pd(w0, _mm256_set1_pd(0x1.0p-64)), _mm256_set1_pd(0x1.0p-65)));
      _mm256_storeu_pd(v + i + 4 * k, _mm256_add_pd(_mm256_mul_pd(w1, _mm256_set1_pd(0x1.0p-63)), _mm256_set1_pd(0x1.0p-64)));
    });
  }
#endif
  scalar_blocks(s, c0 + static_cast<uint32_t>(i), n - i, [&](std::size_t b, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    u[i + b] = r123::u01<double>((uint64_t(r0) << 32) | r1);  // (0, 1]: log never sees 0
    v[i + b] = r123::uneg11<double>((uint64_t(r2) << 32) | r3);
  });
}

void philox_open_uniforms(const PhiloxStream& s, uint32_t c0, std::size_t n, double* out) {
  std::size_t i = 0;
#if defined(HEADSPEC_HAVE_AVX512_PHILOX)
  if (avx512_available()) i = philox_open_uniforms_avx512(s, c0, n, out);
#endif
#if defined(__AVX2__)
  for (; i + kPhiloxBatch <= n; i += kPhiloxBatch) {
    alignas(32) double a[kPhiloxBatch], b[kPhiloxBatch];
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
      _mm256_store_pd(a + 4 * k, open_uniforms4(r0, r1));
      _mm256_store_pd(b + 4 * k, open_uniforms4(r2, r3));
    });
    for (std::size_t j = 0; j < kPhiloxBatch; ++j) {
      out[2 * (i + j)] = a[j];
      out[2 * (i + j) + 1] = b[j];
    }
  }
  // A short run (the 2 blocks of a StreamChunk::Batch refill, once per step of the reduced
  // engine): one register of 4 blocks, half the instructions of 2 scalar blocks; the
  // blocks past the run are computed and dropped.
  for (; i < n; i += 4) {
    alignas(32) double a[4], b[4];
    rounds<1>(s, c0 + static_cast<uint32_t>(i), [&](int, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
      _mm256_store_pd(a, open_uniforms4(r0, r1));
      _mm256_store_pd(b, open_uniforms4(r2, r3));
    });
    const std::size_t take = std::min<std::size_t>(4, n - i);
    for (std::size_t j = 0; j < take; ++j) {
      out[2 * (i + j)] = a[j];
      out[2 * (i + j) + 1] = b[j];
    }
  }
  i = n;
#endif
  scalar_blocks(s, c0 + static_cast<uint32_t>(i), n - i, [&](std::size_t b, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    out[2 * (i + b)] = open_uniform((uint64_t(r0) << 32) | r1);
    out[2 * (i + b) + 1] = open_uniform((uint64_t(r2) << 32) | r3);
  });
}

void ziggurat_blocks(const PhiloxStream& s, uint32_t c0, std::size_t n, const double* x_table, double* a, double* b,
                     uint64_t* reject) {
  reject[0] = reject[1] = 0;
  std::size_t i = 0;
#if defined(HEADSPEC_HAVE_AVX512_PHILOX)
  if (avx512_available()) i = ziggurat_blocks_avx512(s, c0, n, x_table, a, b, reject);
#endif
#if defined(__AVX2__)
  // As philox_avx512.cpp: U from the top 53 bits (exact), gathers of X[i] and X[i+1], the
  // one rounding that of U·X[i], the sign bit 10 moved to bit 63.
  for (; i + kPhiloxBatch <= n; i += kPhiloxBatch) {
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
      ziggurat_word(r0, r1, x_table, a + i + 4 * k, &reject[0], i + 4 * k);
      ziggurat_word(r2, r3, x_table, b + i + 4 * k, &reject[1], i + 4 * k);
    });
  }
#endif
  const ZigguratTables& t = ziggurat_tables();
  scalar_blocks(s, c0 + static_cast<uint32_t>(i), n - i, [&](std::size_t j, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    bool rej0, rej1;
    const uint64_t w0 = (uint64_t(r0) << 32) | r1, w1 = (uint64_t(r2) << 32) | r3;
    a[i + j] = ziggurat_fast(t, w0, &rej0);
    b[i + j] = ziggurat_fast(t, w1, &rej1);
    if (rej0) std::memcpy(a + i + j, &w0, sizeof w0);  // for the slow path
    if (rej1) std::memcpy(b + i + j, &w1, sizeof w1);
    reject[0] |= uint64_t(rej0) << (i + j);
    reject[1] |= uint64_t(rej1) << (i + j);
  });
}

void ziggurat_blocks_with_uniforms(const PhiloxStream& s, uint32_t c0, const double* x_table, double* a, double* b,
                                   uint64_t* reject, uint32_t uniform_c1, uint32_t u0, double* uniforms) {
#if defined(__AVX2__)
  // Five registers through the rounds together: four of normal blocks c0 .. c0 + 15, one of
  // uniform blocks u0 .. u0 + 3 (counter word 1 = uniform_c1, the same key). Integer
  // arithmetic only, so the bits are those of ziggurat_blocks and philox_open_uniforms.
  static_assert(kVecs == 4, "16 normal blocks are four registers");
  reject[0] = reject[1] = 0;
  __m256i x0[5], x1[5], x2[5], x3[5];
  const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
  for (int v = 0; v < 5; ++v) {
    const uint32_t first = v < 4 ? c0 + 4u * static_cast<uint32_t>(v) : u0;
    x0[v] = _mm256_add_epi32(_mm256_set1_epi64x(first), lane);
    x1[v] = _mm256_set1_epi64x(v < 4 ? s.c1 : uniform_c1);
    x2[v] = _mm256_set1_epi64x(s.c2);
    x3[v] = _mm256_set1_epi64x(s.c3);
  }
  rounds_from<5>(s.k0, s.k1, x0, x1, x2, x3, [&](int k, __m256i r0, __m256i r1, __m256i r2, __m256i r3) {
    if (k < 4) {
      ziggurat_word(r0, r1, x_table, a + 4 * k, &reject[0], 4 * k);
      ziggurat_word(r2, r3, x_table, b + 4 * k, &reject[1], 4 * k);
    } else {
      alignas(32) double u[4], v[4];
      _mm256_store_pd(u, open_uniforms4(r0, r1));
      _mm256_store_pd(v, open_uniforms4(r2, r3));
      for (int j = 0; j < 4; ++j) {
        uniforms[2 * j] = u[j];
        uniforms[2 * j + 1] = v[j];
      }
    }
  });
#else
  ziggurat_blocks(s, c0, kPhiloxBatch, x_table, a, b, reject);
  PhiloxStream us = s;
  us.c1 = uniform_c1;
  philox_open_uniforms(us, u0, 4, uniforms);
#endif
}

}  // namespace headspec::detail

namespace headspec {

void philox4x32_10(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, std::size_t n,
                   uint32_t* out) {
  detail::philox_words(detail::PhiloxStream{k0, k1, c1, c2, c3}, c0, n, out);
}

const char* philox_instruction_set() {
  if (detail::avx512_available()) return "avx512f";
#if defined(__AVX2__)
  return "avx2";
#else
  return "scalar";
#endif
}

}  // namespace headspec
