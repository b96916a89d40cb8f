#pragma once
// The per-sample computation of docs/model.md §3–4, §7, written once for every engine:
// from the low-dimensional projections of one sample — scores S (H×L), values g (L) — and
// the readout c to the attention A, the position weights a, the head outputs o, the output
// ŷ, and the map v ↦ Φ v whose value at g is J = ∂ŷ/∂S. The element type T is one sample's
// double or W samples in SIMD lanes (lanes.hpp); the sizes are known at compile time
// (FixedSizes, the reduced engine's common cases) or at run time (DynamicSizes). The
// activation's maths is its policy's (activations.hpp); the engines only differ in how
// they produce S and g and how they apply the updates.
#include <array>
#include <vector>

#include "headspec/kernel/activations.hpp"

namespace headspec::kernel {

/// H and L known at run time.
struct DynamicSizes {
  static constexpr int kH = 0, kL = 0, kHL = 0;  // no compile-time capacity
  int H, L;
};

/// H and L known at compile time: every loop has constant bounds, every array is on the stack.
template <int H_, int L_>
struct FixedSizes {
  static constexpr int H = H_, L = L_;
  static constexpr int kH = H_, kL = L_, kHL = H_ * L_;
};

/// N elements of T: on the stack for fixed sizes, else a vector sized at construction.
template <class T, class Sizes, int N>
struct KernelBuffer {
  std::vector<T> v;
  explicit KernelBuffer(int n) : v(static_cast<std::size_t>(n), lane_constant<T>(0.0)) {}
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
};
template <class T, int H, int L, int N>
struct KernelBuffer<T, FixedSizes<H, L>, N> {
  std::array<T, N> v;
  explicit KernelBuffer(int /*n*/) {}
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
};

template <class T, class Sizes>
class AttentionCore {
 public:
  AttentionCore(Activation activation, Sizes sizes)
      : activation_(activation),
        sizes_(sizes),
        A_(H() * L()),
        a_(L()),
        o_(H()),
        scratch_(H()),
        c_(H()),
        yhat_(lane_constant<T>(0.0)) {}

  /// Forward pass for scores S (H×L), readout c (H) and values g (L); g = nullptr skips the
  /// head outputs and ŷ (the value channel integrated out, docs/model.md §7). Every
  /// normalisation is by log-sum-exp, so scores of any size give finite weights.
  void forward(const T* S, const T* g, const double* c) {
    const int H = sizes_.H, L = sizes_.L;
    for (int h = 0; h < H; ++h) c_.data()[h] = c[h];
    T* A = A_.data();
    with_activation_policy(activation_, [&](auto policy) { policy.attention(sizes_, S, A, scratch_.data()); });
    for (int l = 0; l < L; ++l) {  // a_ℓ = Σ_h c_h A_hℓ
      T sum = c[0] * A[l];
      for (int h = 1; h < H; ++h) sum += c[h] * A[h * L + l];
      a_.data()[l] = sum;
    }
    if (g == nullptr) return;
    yhat_ = lane_constant<T>(0.0);
    for (int h = 0; h < H; ++h) {  // o_h = Σ_ℓ A_hℓ g_ℓ, ŷ = Σ_h c_h o_h
      T o = lane_constant<T>(0.0);
      for (int l = 0; l < L; ++l) o += A[h * L + l] * g[l];
      o_.data()[h] = o;
      yhat_ += c[h] * o;
    }
  }

  /// out = Φ v (H×L from L): with v = g this is J = ∂ŷ/∂S; with v = e it is P of docs/model.md §7.
  void apply_jacobian(const T* v, T* out) const {
    with_activation_policy(activation_, [&](auto policy) {
      policy.jacobian(sizes_, A_.data(), a_.data(), c_.data(), v, out);
    });
  }

  /// Σ_ℓ Σ_ℓ' Φ_hℓ,ℓ' Φ_gℓ,ℓ' for h ≤ g (the upper triangle row by row, H(H+1)/2 entries): the
  /// Gram matrix of Φ's rows that the SGD-noise term of dQ/dt needs when g is integrated
  /// out (docs/model.md §7), in closed form.
  void jacobian_gram(T* out) const {
    with_activation_policy(activation_, [&](auto policy) {
      int q = 0;
      for (int h = 0; h < H(); ++h)
        for (int g = h; g < H(); ++g, ++q) out[q] = policy.jacobian_gram(sizes_, h, g, A_.data(), a_.data(), c_.data());
    });
  }

  /// One entry Φ_hℓ,ℓ' of the map above.
  T phi(int h, int l, int lp) const {
    return with_activation_policy(activation_, [&](auto policy) -> T {
      return policy.phi(sizes_, h, l, lp, A_.data(), a_.data(), c_.data());
    });
  }

  const T* attention() const { return A_.data(); }          ///< A = σ(S), H×L
  const T* position_weights() const { return a_.data(); }  ///< a_ℓ = Σ_h c_h A_hℓ, L
  const T* head_outputs() const { return o_.data(); }      ///< o_h = Σ_ℓ A_hℓ g_ℓ = ∂ŷ/∂c_h (after forward with g)
  const T& output() const { return yhat_; }                ///< ŷ (after forward with g)
  Activation activation() const { return activation_; }
  int H() const { return sizes_.H; }
  int L() const { return sizes_.L; }

 private:
  Activation activation_;
  Sizes sizes_;
  KernelBuffer<T, Sizes, Sizes::kHL> A_;
  KernelBuffer<T, Sizes, Sizes::kL> a_;
  KernelBuffer<T, Sizes, Sizes::kH> o_, scratch_;
  KernelBuffer<double, Sizes, Sizes::kH> c_;
  T yhat_;
};

}  // namespace headspec::kernel
