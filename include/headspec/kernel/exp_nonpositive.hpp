#pragma once
// e^x for x ≤ 0, W lanes at once (W doubles in SIMD registers), for the log-sum-exp
// normalisations of the batched attention kernel (docs/model.md §3) and the theory engine's
// evaluation: within 1 ulp of std::exp for −708 ≤ x ≤ 0; below −708 it returns
// e^−708 ≈ 3.3·10^-308 instead of a subnormal or 0; a NaN stays NaN.
#include <Eigen/Core>
#include <bit>
#include <cstdint>
#include <cstring>

namespace headspec::detail {

// x = k ln2 + r with k = round(x/ln2), |r| ≤ ln2/2 (Cody–Waite: fdlibm's two-part ln2, so
// k·ln2_hi is exact); e^r by a degree-11 polynomial, 2^k written into the exponent bits.
// The round-to-nearest of x/ln2 is the usual 1.5·2^52 shift, whose low bits then hold k.
// The polynomial is the near-minimax (Chebyshev) fit of e^r on [−ln2/2, ln2/2] (mpmath
// chebyfit, 50 digits, coefficients rounded to double): relative error 1.7·10^-17 with the
// rounded coefficients, against 4·10^-18 for the degree-13 Taylor polynomial it replaces at
// two multiply-adds less. It is evaluated as E(r²) + r·O(r²), two Horner chains of half the
// length, which the processor overlaps. Eigen's exp uses a Padé form with one division per
// packet, which costs more than the whole polynomial. Always inlined into the loops that
// use it: as a call it cost a fifth of an evaluation more (bench_theory).
template <int W>
[[gnu::always_inline]] inline Eigen::Array<double, W, 1> exp_nonpositive(const Eigen::Array<double, W, 1>& x) {
  using V = Eigen::Array<double, W, 1>;
  constexpr double kLog2e = 1.44269504088896338700e+00;
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShift = 0x1.8p52;
  // c_0 … c_11 of the fit (c_0 = c_1 = 1 after rounding).
  constexpr double kCoef[12] = {1.0,
                                1.0,
                                0x1.0000000000011p-1,
                                0x1.555555555555ap-3,
                                0x1.555555554f0cfp-5,
                                0x1.111111110f225p-7,
                                0x1.6c16c187fbe02p-10,
                                0x1.a01a01b14378fp-13,
                                0x1.a01991ac8730ap-16,
                                0x1.71ddf5749d126p-19,
                                0x1.28b4057f44145p-22,
                                0x1.af631d0059becp-26};
  const V xc = x.max(-708.0);  // keeps 2^k normal; std::max semantics keep a NaN
  const V t = xc * kLog2e + kShift;
  const V k = t - kShift;
  const V r = (xc - k * kLn2Hi) - k * kLn2Lo;
  // e^r = 1 + r + r² (Q_e(r²) + r Q_o(r²)): the two short chains for c_2 … c_11, then the
  // leading terms, whose rounding then dominates (≤ 1 ulp from std::exp, as Horner's).
  const V r2 = r * r;
  V even = V::Constant(kCoef[10]), odd = V::Constant(kCoef[11]);
  for (int i = 8; i >= 2; i -= 2) {
    even = even * r2 + kCoef[i];
    odd = odd * r2 + kCoef[i + 1];
  }
  const V tail = (odd * r + even) * r2 + r;  // e^r − 1
  uint64_t bits[W];
  std::memcpy(bits, t.data(), sizeof bits);
  for (int j = 0; j < W; ++j) bits[j] = (bits[j] - std::bit_cast<uint64_t>(kShift) + 1023) << 52;
  V scale;
  std::memcpy(scale.data(), bits, sizeof bits);
  return tail * scale + scale;
}

}  // namespace headspec::detail
