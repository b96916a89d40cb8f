#pragma once
// The attention activations σ (docs/model.md §3), one policy each: the attention A = σ(S)
// and the linear map Φ with ∂ŷ/∂s_hℓ = Σ_ℓ' Φ_hℓ,ℓ' g_ℓ' (docs/model.md §3, §7), written
// once for an element type T that is one sample's double or W samples in SIMD lanes
// (lanes.hpp). Arrays are row-major: entry (h, ℓ) of an H×L array is element h·L + ℓ.
// A policy provides, for sizes sz (sz.H, sz.L: compile-time constants for the fixed-size
// kernel, so that every loop has constant bounds even where the compiler does not inline)
//   attention(sz, S, A, scratch)         A = σ(S); scratch holds H elements;
//   jacobian(sz, A, a, c, v, out)        out = Φ v (H×L from L), a_ℓ = Σ_h c_h A_hℓ;
//   jacobian_gram(sz, h, g, A, a, c)     Σ_ℓ Σ_ℓ' Φ_hℓ,ℓ' Φ_gℓ,ℓ';
//   phi(sz, h, l, lp, A, a, c)           one entry Φ_hℓ,ℓ'.
// Adding an activation: its enum value and name (activation.hpp, src/activation.cpp's
// table), a policy here, and its case in with_activation_policy below.
#include <cmath>

#include "headspec/activation.hpp"
#include "headspec/kernel/lanes.hpp"

namespace headspec::kernel {

/// softmax (extra_logit = false) and softmax-1 (true: an extra logit 0 in each head's
/// normalisation, so that a head may attend to nothing): row by row, by log-sum-exp.
/// Φ_hℓ,ℓ' = c_h A_hℓ (δ_ℓℓ' − A_hℓ').
template <bool extra_logit>
struct SoftmaxPolicy {
  /// The attention before its normalisation: A_hℓ = e^{s_hℓ − m_h} with m_h the row's largest
  /// logit (0 included for softmax-1), and inv_h = 1 / (Σ_ℓ A_hℓ [+ e^{−m_h}]), so that the
  /// attention is A_hℓ·inv_h. The theory's fused pass applies inv_h where it reads A.
  template <class T, class Sz>
  [[gnu::always_inline]] static void unnormalised(const Sz& sz, const T* S, T* A, T* inv) {
    const int H = sz.H, L = sz.L;
    for (int h = 0; h < H; ++h) {
      T m = lane_constant<T>(extra_logit ? 0.0 : -INFINITY);
      for (int l = 0; l < L; ++l) m = lane_max(m, S[h * L + l]);
      for (int l = 0; l < L; ++l) A[h * L + l] = S[h * L + l] - m;
      inv[h] = -m;  // the exponent of the extra logit
    }
    exp_nonpositive_inplace(A, H * L);
    if constexpr (extra_logit) exp_nonpositive_inplace(inv, H);
    for (int h = 0; h < H; ++h) {
      T z = extra_logit ? T(inv[h]) : lane_constant<T>(0.0);
      for (int l = 0; l < L; ++l) z += A[h * L + l];
      inv[h] = lane_inverse(z);  // one division per row, not per entry
    }
  }
  template <class T, class Sz>
  static void attention(const Sz& sz, const T* S, T* A, T* scratch) {
    const int H = sz.H, L = sz.L;
    unnormalised(sz, S, A, scratch);
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) A[h * L + l] *= scratch[h];
  }
  /// (Φ v)_hℓ = c_h u_hℓ with u_hℓ = A_hℓ (v_ℓ − m_h), m_h = Σ_ℓ A_hℓ v_ℓ: u, from A_hℓ,
  /// v_ℓ and m_h. The theory's fused pass (src/engines/theory_fused_softmax.hpp) sums u and
  /// multiplies the sums by c_h.
  template <class T>
  [[gnu::always_inline]] static T centred(const T& A, const T& v, const T& mean) {
    return A * (v - mean);
  }
  /// Σ_ℓ Σ_ℓ' Φ_hℓ,ℓ' Φ_gℓ,ℓ' / (c_h c_g) from ab = Σ_ℓ A_hℓ A_gℓ and cross = Σ_ℓ A_hℓ A_gℓ (A_hℓ +
  /// A_gℓ): Φ_h = c_h (diag A_h − A_h A_hᵀ) and Σ (D_a − a aᵀ)∘(D_b − b bᵀ) = Σ ab − Σ ab (a + b) + (Σ ab)².
  template <class T>
  [[gnu::always_inline]] static T gram_from_sums(const T& ab, const T& cross) {
    return ab - cross + ab * ab;
  }
  template <class T, class Sz>
  static void jacobian(const Sz& sz, const T* A, const T* /*a*/, const double* c, const T* v, T* out) {
    const int H = sz.H, L = sz.L;
    for (int h = 0; h < H; ++h) {
      const T* Ah = A + h * L;
      T mean = lane_constant<T>(0.0);
      for (int l = 0; l < L; ++l) mean += Ah[l] * v[l];
      for (int l = 0; l < L; ++l) out[h * L + l] = c[h] * centred(Ah[l], v[l], mean);
    }
  }
  template <class T, class Sz>
  static T jacobian_gram(const Sz& sz, int h, int g, const T* A, const T* /*a*/, const double* c) {
    const int L = sz.L;
    const T* Ah = A + h * L;
    const T* Ag = A + g * L;
    T ab = lane_constant<T>(0.0), cross = lane_constant<T>(0.0);
    for (int l = 0; l < L; ++l) {
      const T xy = Ah[l] * Ag[l];
      ab += xy;
      cross += xy * (Ah[l] + Ag[l]);
    }
    return (c[h] * c[g]) * gram_from_sums(ab, cross);
  }
  template <class T, class Sz>
  static T phi(const Sz& sz, int h, int l, int lp, const T* A, const T* /*a*/, const double* c) {
    const int L = sz.L;
    return c[h] * A[h * L + l] * ((l == lp ? 1.0 : 0.0) - A[h * L + lp]);
  }
};

/// Bayes-softmax: one normalisation over heads and positions. Φ_hℓ,ℓ' = A_hℓ (c_h δ_ℓℓ' − a_ℓ').
struct BayesSoftmaxPolicy {
  template <class T, class Sz>
  static void attention(const Sz& sz, const T* S, T* A, T* /*scratch*/) {
    const int H = sz.H, L = sz.L;
    const int HL = H * L;
    T m = lane_constant<T>(-INFINITY);
    for (int i = 0; i < HL; ++i) m = lane_max(m, S[i]);
    for (int i = 0; i < HL; ++i) A[i] = S[i] - m;
    exp_nonpositive_inplace(A, HL);
    T z = lane_constant<T>(0.0);
    for (int i = 0; i < HL; ++i) z += A[i];
    const T inv = lane_inverse(z);
    for (int i = 0; i < HL; ++i) A[i] *= inv;
  }
  template <class T, class Sz>
  static void jacobian(const Sz& sz, const T* A, const T* a, const double* c, const T* v, T* out) {
    const int H = sz.H, L = sz.L;
    T mean = lane_constant<T>(0.0);
    for (int l = 0; l < L; ++l) mean += a[l] * v[l];
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) out[h * L + l] = A[h * L + l] * (c[h] * v[l] - mean);
  }
  template <class T, class Sz>
  static T jacobian_gram(const Sz& sz, int h, int g, const T* A, const T* a, const double* c) {
    const int L = sz.L;
    // Σ_ℓ A_hℓ A_gℓ (c_h c_g − (c_h + c_g) a_ℓ + |a|²).
    T a2 = lane_constant<T>(0.0);
    for (int l = 0; l < L; ++l) a2 += a[l] * a[l];
    const double chg = c[h] * c[g], csum = c[h] + c[g];
    T sum = lane_constant<T>(0.0);
    for (int l = 0; l < L; ++l) sum += A[h * L + l] * A[g * L + l] * (chg - csum * a[l] + a2);
    return sum;
  }
  template <class T, class Sz>
  static T phi(const Sz& sz, int h, int l, int lp, const T* A, const T* a, const double* c) {
    const int L = sz.L;
    return A[h * L + l] * (c[h] * (l == lp ? 1.0 : 0.0) - a[lp]);
  }
};

/// linear: A = S (a baseline). Φ_hℓ,ℓ' = c_h δ_ℓℓ'.
struct LinearPolicy {
  template <class T, class Sz>
  static void attention(const Sz& sz, const T* S, T* A, T* /*scratch*/) {
    const int H = sz.H, L = sz.L;
    for (int i = 0; i < H * L; ++i) A[i] = S[i];
  }
  template <class T, class Sz>
  static void jacobian(const Sz& sz, const T* /*A*/, const T* /*a*/, const double* c, const T* v, T* out) {
    const int H = sz.H, L = sz.L;
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) out[h * L + l] = c[h] * v[l];
  }
  template <class T, class Sz>
  static T jacobian_gram(const Sz& sz, int h, int g, const T* /*A*/, const T* /*a*/, const double* c) {
    const int L = sz.L;
    return lane_constant<T>(c[h] * c[g] * L);
  }
  template <class T, class Sz>
  static T phi(const Sz& /*sz*/, int h, int l, int lp, const T* /*A*/, const T* /*a*/, const double* c) {
    return lane_constant<T>(l == lp ? c[h] : 0.0);
  }
};

/// sigmoid: A_hℓ = 1/(1 + e^{−s_hℓ}), entry by entry, no normalisation: a head may attend to
/// several positions or none. Computed from e = e^{−|s|} ≤ 1 as 1/(1 + e) or e/(1 + e), so
/// finite for any s. Φ_hℓ,ℓ' = c_h A_hℓ (1 − A_hℓ) δ_ℓℓ'.
struct SigmoidPolicy {
  template <class T, class Sz>
  static void attention(const Sz& sz, const T* S, T* A, T* /*scratch*/) {
    const int H = sz.H, L = sz.L;
    const int HL = H * L;
    for (int i = 0; i < HL; ++i) A[i] = -lane_abs(S[i]);
    exp_nonpositive_inplace(A, HL);
    for (int i = 0; i < HL; ++i) {
      const T e = A[i], inv = lane_inverse(T(1.0 + e));
      A[i] = select_nonnegative(S[i], inv, T(e * inv));
    }
  }
  template <class T, class Sz>
  static void jacobian(const Sz& sz, const T* A, const T* /*a*/, const double* c, const T* v, T* out) {
    const int H = sz.H, L = sz.L;
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) {
        const T x = A[h * L + l];
        out[h * L + l] = c[h] * x * (1.0 - x) * v[l];
      }
  }
  template <class T, class Sz>
  static T jacobian_gram(const Sz& sz, int h, int g, const T* A, const T* /*a*/, const double* c) {
    const int L = sz.L;
    T sum = lane_constant<T>(0.0);
    for (int l = 0; l < L; ++l) {
      const T x = A[h * L + l], y = A[g * L + l];
      sum += x * (1.0 - x) * y * (1.0 - y);
    }
    return (c[h] * c[g]) * sum;
  }
  template <class T, class Sz>
  static T phi(const Sz& sz, int h, int l, int lp, const T* A, const T* /*a*/, const double* c) {
    const int L = sz.L;
    const T x = A[h * L + l];
    return l == lp ? T(c[h] * x * (1.0 - x)) : lane_constant<T>(0.0);
  }
};

/// Calls f(Policy{}) with the policy of `activation`: the one place that maps the enum to
/// its maths.
template <class F>
decltype(auto) with_activation_policy(Activation activation, F&& f) {
  switch (activation) {
    case Activation::Softmax: return f(SoftmaxPolicy<false>{});
    case Activation::Softmax1: return f(SoftmaxPolicy<true>{});
    case Activation::BayesSoftmax: return f(BayesSoftmaxPolicy{});
    case Activation::Linear: return f(LinearPolicy{});
    case Activation::Sigmoid: return f(SigmoidPolicy{});
  }
  return f(LinearPolicy{});  // not reached: every enum value is a case above
}

}  // namespace headspec::kernel
