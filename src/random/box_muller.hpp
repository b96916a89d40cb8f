#pragma once
namespace headspec::detail {
/// (u, v) → out[2b] = r cos πv, out[2b+1] = r sin πv, r = √(−2 ln u), for n pairs;
/// u ∈ (0, 1], v ∈ [−1, 1]. Vectorised with glibc's libmvec; n must be a multiple of 8 so
/// that no element is computed by the scalar remainder path.
void box_muller(const double* u, const double* v, double* out, int n);
}  // namespace headspec::detail
