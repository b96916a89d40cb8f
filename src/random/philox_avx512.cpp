// Philox4x32-10 with AVX-512F, 32 blocks at a time (8 per register, 4 independent chains):
// the same scheme as the AVX2 path of philox_blocks.cpp at twice the width, with the two
// exclusive-ors of a round in one vpternlogq. Only exact integer arithmetic and exact
// conversions, so the bits are those of Random123's scalar Philox.
//
// This file alone is compiled with -mavx512f (CMakeLists.txt) and is called only after a
// run-time check of the processor. It includes no header with inline functions of external
// linkage, so no AVX-512 copy of such a function can be picked by the linker for other files.
#include <immintrin.h>

#include "philox_blocks.hpp"

// GCC 12's _mm512_undefined_epi32 (used inside _mm512_mul_epu32 and _mm512_srli_epi64) is
// deliberately uninitialised and trips -Wuninitialized once inlined; nothing here is.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace headspec::detail {
namespace {

constexpr int kVecs = 4;
constexpr std::size_t kBatch = 8 * kVecs;  // blocks per call of rounds()

// Random123 philox.h: PHILOX_M4x32_0/1 and the Weyl key increments PHILOX_W32_0/1.
constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;

template <class Sink>
inline void rounds(const PhiloxStream& s, uint32_t c0, Sink sink) {
  __m512i x0[kVecs], x1[kVecs], x2[kVecs], x3[kVecs];
  const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) {
    x0[v] = _mm512_add_epi32(_mm512_set1_epi64(c0 + 8u * static_cast<uint32_t>(v)), lane);  // wraps mod 2^32
    x1[v] = _mm512_set1_epi64(s.c1);
    x2[v] = _mm512_set1_epi64(s.c2);
    x3[v] = _mm512_set1_epi64(s.c3);
  }
  const __m512i m0 = _mm512_set1_epi64(kM0), m1 = _mm512_set1_epi64(kM1);
  uint32_t k0 = s.k0, k1 = s.k1;
#pragma GCC unroll 10
  for (int r = 0; r < 10; ++r) {
    const __m512i key0 = _mm512_set1_epi64(k0), key1 = _mm512_set1_epi64(k1);
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      const __m512i p0 = _mm512_mul_epu32(x0[v], m0);  // hi0:lo0 = M0·ctr0
      const __m512i p1 = _mm512_mul_epu32(x2[v], m1);  // hi1:lo1 = M1·ctr2
      // out = (hi1 ^ ctr1 ^ key0, lo1, hi0 ^ ctr3 ^ key1, lo0); 0x96 is a ^ b ^ c.
      x0[v] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x1[v], key0, 0x96);
      x2[v] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x3[v], key1, 0x96);
      x1[v] = p1;
      x3[v] = p0;
    }
    k0 += kW0;
    k1 += kW1;
  }
  const __m512i low = _mm512_set1_epi64(0xFFFFFFFF);
#pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v)
    sink(v, _mm512_and_si512(x0[v], low), _mm512_and_si512(x1[v], low), _mm512_and_si512(x2[v], low),
         _mm512_and_si512(x3[v], low));
}

// Exact conversions, as in philox_blocks.cpp.
inline __m512d to_double_u32(__m512i x) {
  const __m512i magic = _mm512_set1_epi64(0x4330000000000000);
  return _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(x, magic)), _mm512_set1_pd(0x1.0p52));
}
inline __m512d to_double_i32(__m512i x) {
  return _mm512_sub_pd(to_double_u32(_mm512_xor_si512(x, _mm512_set1_epi64(0x80000000))), _mm512_set1_pd(0x1.0p31));
}
inline __m512d join(__m512d hi, __m512d lo) { return _mm512_add_pd(_mm512_mul_pd(hi, _mm512_set1_pd(0x1.0p32)), lo); }
// Open uniforms (0, 1) of the words hi·2^32 + lo of eight blocks, as open_uniforms4 in
// philox_blocks.cpp.
inline __m512d open_uniforms8(__m512i hi, __m512i lo) {
  const __m512d h = _mm512_add_pd(_mm512_mul_pd(to_double_u32(hi), _mm512_set1_pd(0x1.0p21)), to_double_u32(_mm512_srli_epi64(lo, 11)));
  return _mm512_min_pd(_mm512_mul_pd(_mm512_add_pd(h, _mm512_set1_pd(0.5)), _mm512_set1_pd(0x1.0p-53)),
                       _mm512_set1_pd(0x1.fffffffffffffp-1));
}

}  // namespace

std::size_t philox_words_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, uint32_t* out) {
  std::size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    alignas(64) uint64_t tmp[4][kBatch];
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int v, __m512i r0, __m512i r1, __m512i r2, __m512i r3) {
      _mm512_store_si512(tmp[0] + 8 * v, r0);
      _mm512_store_si512(tmp[1] + 8 * v, r1);
      _mm512_store_si512(tmp[2] + 8 * v, r2);
      _mm512_store_si512(tmp[3] + 8 * v, r3);
    });
    for (std::size_t b = 0; b < kBatch; ++b)
      for (int j = 0; j < 4; ++j) out[4 * (i + b) + j] = static_cast<uint32_t>(tmp[j][b]);
  }
  return i;
}

std::size_t philox_uniform_pairs_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, double* u, double* v) {
  std::size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m512i r0, __m512i r1, __m512i r2, __m512i r3) {
      const __m512d w0 = join(to_double_u32(r0), to_double_u32(r1));
      const __m512d w1 = join(to_double_i32(r2), to_double_u32(r3));
      _mm512_storeu_pd(u + i + 8 * k, _mm512_add_pd(_mm512_mul_pd(w0, _mm512_set1_pd(0x1.0p-64)), _mm512_set1_pd(0x1.0p-65)));
      _mm512_storeu_pd(v + i + 8 * k, _mm512_add_pd(_mm512_mul_pd(w1, _mm512_set1_pd(0x1.0p-63)), _mm512_set1_pd(0x1.0p-64)));
    });
  }
  return i;
}

std::size_t philox_open_uniforms_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, double* out) {
  std::size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    alignas(64) double a[kBatch], b[kBatch];
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m512i r0, __m512i r1, __m512i r2, __m512i r3) {
      _mm512_store_pd(a + 8 * k, open_uniforms8(r0, r1));
      _mm512_store_pd(b + 8 * k, open_uniforms8(r2, r3));
    });
    for (std::size_t j = 0; j < kBatch; ++j) {
      out[2 * (i + j)] = a[j];
      out[2 * (i + j) + 1] = b[j];
    }
  }
  return i;
}

// The ziggurat's fast path (ziggurat.hpp): layer (bits 0–9) and sign (bit 10) from the
// word's low half, U from its top 53 bits (exact: r_hi·2^21 + (r_lo >> 11) < 2^53), the layer's two
// table entries by gathers; the one rounding is that of U·X[i], as in ziggurat_fast.
std::size_t ziggurat_blocks_avx512(const PhiloxStream& s, uint32_t c0, std::size_t n, const double* x_table, double* a,
                                   double* b, uint64_t* reject) {
  std::size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    rounds(s, c0 + static_cast<uint32_t>(i), [&](int k, __m512i r0, __m512i r1, __m512i r2, __m512i r3) {
      const auto word = [&](__m512i hi, __m512i lo, double* out, uint64_t* rej) {
        const __m512i layer = _mm512_and_si512(lo, _mm512_set1_epi64((1 << kZigguratBits) - 1));
        const __m512i sign = _mm512_and_si512(_mm512_slli_epi64(lo, 63 - kZigguratBits), _mm512_set1_epi64(INT64_MIN));
        const __m512d u = _mm512_mul_pd(_mm512_add_pd(_mm512_mul_pd(to_double_u32(hi), _mm512_set1_pd(0x1.0p21)),
                                                      to_double_u32(_mm512_srli_epi64(lo, 11))),
                                        _mm512_set1_pd(0x1.0p-53));
        const __m512d x = _mm512_mul_pd(u, _mm512_i64gather_pd(layer, x_table, 8));
        const __mmask8 ok = _mm512_cmp_pd_mask(x, _mm512_i64gather_pd(layer, x_table + 1, 8), _CMP_LT_OQ);
        const __m512i w = _mm512_or_si512(_mm512_slli_epi64(hi, 32), lo);  // kept for the slow path
        _mm512_storeu_si512(out + i + 8 * k, _mm512_mask_blend_epi64(ok, w, _mm512_xor_si512(_mm512_castpd_si512(x), sign)));
        *rej |= uint64_t(static_cast<uint8_t>(~ok)) << (i + 8 * k);
      };
      word(r0, r1, a, &reject[0]);
      word(r2, r3, b, &reject[1]);
    });
  }
  return i;
}

}  // namespace headspec::detail
