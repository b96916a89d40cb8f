// Compiled with -ffast-math (CMakeLists.txt): glibc declares the vector variants of
// log/sin/cos (libmvec) only under it. Inputs are finite and log's argument is never 0,
// so finite-math changes nothing here.
#include <math.h>

#include "box_muller.hpp"

// No __restrict on the pointers: with it GCC 12 drops the simd clones and calls scalar sincos.
void headspec::detail::box_muller(const double* u, const double* v, double* out, int n) {
#pragma omp simd
  for (int b = 0; b < n; ++b) {
    const double r = sqrt(-2.0 * log(u[b]));
    out[2 * b] = r * cos(M_PI * v[b]);
    out[2 * b + 1] = r * sin(M_PI * v[b]);
  }
}
