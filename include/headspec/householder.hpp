#pragma once
// The reduced engine's QR (docs/model.md §9, docs/gram-engine.md): only R of a thin
// Householder QR, in place.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace headspec {

// R of the thin QR X = Q R, in place, for a column-major rows × cols matrix X with few
// columns (H): Householder reflections as in Eigen's HouseholderQR (the reflector of column
// k is skipped when the column below the diagonal is zero to the smallest normal double,
// so a rank-deficient X gives an exactly zero R_kk), written out because Eigen's dynamic-size
// QR of a 7 × 2 matrix costs more in dispatch than in arithmetic, and at fixed sizes it is
// still faster than Eigen's fixed-size HouseholderQR (bench/bench_qr.cpp, which prints the
// ratio; docs/performance.md). On return the upper
// trapezoid of the first min(rows, cols) rows holds R; the rest of X is overwritten.
// kRows, kCols > 0 fix the size at compile time (the fixed-size step), the same arithmetic.
template <int kRows = 0, int kCols = 0>
[[gnu::always_inline]] inline void householder_r(double* x, int rows_arg = kRows, int cols_arg = kCols) {
  const int rows = kRows > 0 ? kRows : rows_arg, cols = kCols > 0 ? kCols : cols_arg;
  const int reflections = std::min(rows, cols);
  for (int k = 0; k < reflections; ++k) {
    double* col = x + static_cast<std::ptrdiff_t>(k) * rows;
    double tail = 0;
    for (int i = k + 1; i < rows; ++i) tail += col[i] * col[i];
    const double c0 = col[k];
    if (tail <= std::numeric_limits<double>::min()) continue;  // already upper triangular here
    double beta = std::sqrt(c0 * c0 + tail);
    if (c0 >= 0) beta = -beta;
    const double tau = (beta - c0) / beta, scale = 1.0 / (c0 - beta);
    for (int i = k + 1; i < rows; ++i) col[i] *= scale;  // the reflector v = (1, col[k+1..])
    col[k] = beta;
    for (int j = k + 1; j < cols; ++j) {
      double* other = x + static_cast<std::ptrdiff_t>(j) * rows;
      double w = other[k];
      for (int i = k + 1; i < rows; ++i) w += col[i] * other[i];
      w *= tau;
      other[k] -= w;
      for (int i = k + 1; i < rows; ++i) other[i] -= w * col[i];
    }
  }
}

}  // namespace headspec
