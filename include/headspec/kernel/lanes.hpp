#pragma once
// The element types of the attention kernel (include/headspec/kernel/attention_core.hpp):
// one sample's doubles, or W samples at once in SIMD lanes (Eigen::Array<double, W, 1>,
// "structure of arrays"). The few operations whose spelling differs between the two are
// overloaded here, so that the kernel's formulas are written once for both.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "headspec/kernel/exp_nonpositive.hpp"

namespace headspec::kernel {

template <int W>
using LaneArray = Eigen::Array<double, W, 1>;

inline double lane_max(double a, double b) { return std::max(a, b); }
template <int W>
LaneArray<W> lane_max(const LaneArray<W>& a, const LaneArray<W>& b) {
  return a.max(b);
}

inline double lane_abs(double a) { return std::abs(a); }
template <int W>
LaneArray<W> lane_abs(const LaneArray<W>& a) {
  return a.abs();
}

inline double lane_inverse(double a) { return 1.0 / a; }
template <int W>
LaneArray<W> lane_inverse(const LaneArray<W>& a) {
  return a.inverse();
}

/// s ≥ 0 ? a : b, lane by lane.
inline double select_nonnegative(double s, double a, double b) { return s >= 0 ? a : b; }
template <int W>
LaneArray<W> select_nonnegative(const LaneArray<W>& s, const LaneArray<W>& a, const LaneArray<W>& b) {
  return (s >= 0.0).select(a, b);
}

template <class T>
T lane_constant(double v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return T::Constant(v);
}

/// x_i ← e^{x_i} for x_i ≤ 0 (every exponent of a log-sum-exp normalisation), i < n, by the
/// polynomial of exp_nonpositive.hpp (within 1 ulp of std::exp). Doubles are taken 8 at a
/// time into SIMD registers; the result of an element does not depend on its neighbours.
inline void exp_nonpositive_inplace(double* x, int n) {
  constexpr int W = 8;
  int i = 0;
  for (; i + W <= n; i += W) {
    Eigen::Map<LaneArray<W>> pack(x + i);
    pack = detail::exp_nonpositive<W>(pack);
  }
  if (i < n) {
    LaneArray<W> tail = LaneArray<W>::Zero();
    for (int j = i; j < n; ++j) tail[j - i] = x[j];
    tail = detail::exp_nonpositive<W>(tail);
    for (int j = i; j < n; ++j) x[j] = tail[j - i];
  }
}
template <int W>
void exp_nonpositive_inplace(LaneArray<W>* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = detail::exp_nonpositive<W>(x[i]);
}

}  // namespace headspec::kernel
