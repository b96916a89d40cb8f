#pragma once
// The softmax and softmax-1 attention of AttentionKernel (MODEL.md §3, §7) for sizes known
// at compile time, on plain row-major arrays: the reduced engine's step calls it once per
// sample, where AttentionKernel's dynamic-size Eigen products of a 2 × 5 matrix cost more
// in dispatch than in arithmetic. Same formulas as AttentionKernel, with the vectorised
// exponential of AttentionKernelBatch; results agree with AttentionKernel's to rounding
// (tests/test_kernel_fixed.cpp).
#include <algorithm>
#include <cmath>

#include "headspec/activation.hpp"
#include "headspec/kernel.hpp"

namespace headspec {

/// Whether SoftmaxKernelFixed implements this activation (the others keep AttentionKernel).
constexpr bool fixed_kernel_supports(Activation a) { return a == Activation::Softmax || a == Activation::Softmax1; }

template <int H, int L>
class SoftmaxKernelFixed {
 public:
  explicit SoftmaxKernelFixed(Activation activation) : softmax1_(activation == Activation::Softmax1) {}

  /// Forward pass for scores S (H × L, row-major), values g (L) and readout c (H): A = σ(S)
  /// row by row by log-sum-exp (softmax-1 with its extra logit 0, MODEL.md §3), o = A g,
  /// ŷ = c·o.
  [[gnu::always_inline]] void forward(const double* S, const double* g, const double* c) {
    // The exponents s_hℓ − m_h (and −m_h, softmax-1's logit 0), all ≤ 0, exponentiated
    // kLanes at a time by AttentionKernelBatch::exp_nonpositive: within an ulp of std::exp
    // and a tenth of its cost for 10 values.
    constexpr int kLanes = AttentionKernelBatch::kLanes;
    constexpr int kExps = H * (L + 1), kPacks = (kExps + kLanes - 1) / kLanes;
    using Lanes = AttentionKernelBatch::Lanes;
    alignas(64) double e[kPacks * kLanes];  // e[h (L + 1) + ℓ] = s_hℓ − m_h, e[h (L + 1) + L] = −m_h
    for (int h = 0; h < H; ++h) {
      const double* s = S + h * L;
      double m = softmax1_ ? 0.0 : -INFINITY;
      for (int l = 0; l < L; ++l) m = std::max(m, s[l]);
      for (int l = 0; l < L; ++l) e[h * (L + 1) + l] = s[l] - m;
      e[h * (L + 1) + L] = softmax1_ ? -m : 0.0;
    }
    for (int i = kExps; i < kPacks * kLanes; ++i) e[i] = 0.0;
    for (int p = 0; p < kPacks; ++p) {
      Eigen::Map<Lanes, Eigen::Aligned64> pack(e + p * kLanes);
      pack = AttentionKernelBatch::exp_nonpositive(pack);
    }
    for (int h = 0; h < H; ++h) {
      const double* eh = e + h * (L + 1);
      double* a = A_ + h * L;
      double z = softmax1_ ? eh[L] : 0.0;
      for (int l = 0; l < L; ++l) z += eh[l];
      for (int l = 0; l < L; ++l) a[l] = eh[l] / z;
      double o = 0;
      for (int l = 0; l < L; ++l) o += a[l] * g[l];
      o_[h] = o;
    }
    double y = 0;
    for (int h = 0; h < H; ++h) y += c[h] * o_[h];
    yhat_ = y;
  }

  /// out = Φ v (H × L from L): out_hℓ = c_h A_hℓ (v_ℓ − Σ_ℓ' A_hℓ' v_ℓ') (MODEL.md §7); with
  /// v = g this is J = ∂ŷ/∂S.
  [[gnu::always_inline]] void apply_jacobian(const double* v, const double* c, double* out) const {
    for (int h = 0; h < H; ++h) {
      const double* a = A_ + h * L;
      double mean = 0;
      for (int l = 0; l < L; ++l) mean += a[l] * v[l];
      for (int l = 0; l < L; ++l) out[h * L + l] = c[h] * a[l] * (v[l] - mean);
    }
  }

  const double* attention() const { return A_; }     ///< A, H × L row-major
  const double* head_outputs() const { return o_; }  ///< o_h = Σ_ℓ A_hℓ g_ℓ = ∂ŷ/∂c_h
  double output() const { return yhat_; }            ///< ŷ

 private:
  bool softmax1_;
  double A_[H * L], o_[H];
  double yhat_ = 0;
};

}  // namespace headspec
