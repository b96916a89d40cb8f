#pragma once
// The per-sample computation shared by every engine (docs/model.md §3–4, §7), as the engines
// call it: kernel::AttentionCore (include/headspec/kernel/attention_core.hpp) for one sample
// with Eigen types (AttentionKernel) or for kLanes samples at once, one per SIMD lane
// (AttentionKernelBatch). Both run the same code; their results agree to rounding.
#include <Eigen/Dense>

#include "headspec/activation.hpp"
#include "headspec/kernel/attention_core.hpp"

namespace headspec {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// One sample: scores S (H×L), values g (L), readout c (H).
class AttentionKernel {
 public:
  AttentionKernel(Activation activation, int H, int L) : core_(activation, {H, L}) {}

  /// Forward pass: A = σ(S), a, o, ŷ (docs/model.md §3).
  void forward(const RowMatrix& S, const Eigen::VectorXd& g, const Eigen::VectorXd& c) {
    core_.forward(S.data(), g.data(), c.data());
  }
  /// out = Φ v, i.e. out_hℓ = Σ_ℓ' Φ_hℓ,ℓ' v_ℓ' where ∂ŷ/∂s_hℓ = Σ_ℓ' Φ_hℓ,ℓ' g_ℓ'
  /// (docs/model.md §7). With v = g this is J = ∂ŷ/∂S; with v = e it is P of §7.
  void apply_jacobian(const Eigen::VectorXd& v, RowMatrix& out) const {
    out.resize(H(), L());
    core_.apply_jacobian(v.data(), out.data());
  }
  /// One entry Φ_hℓ,ℓ' of the linear map above.
  double phi(int h, int l, int lp) const { return core_.phi(h, l, lp); }
  /// out_hh' = Σ_ℓ Σ_ℓ' Φ_hℓ,ℓ' Φ_h'ℓ,ℓ' (H×H, symmetric; docs/model.md §7).
  void jacobian_gram(Eigen::MatrixXd& out) const;

  Eigen::Map<const RowMatrix> attention() const { return {core_.attention(), H(), L()}; }  ///< A, H×L
  Eigen::Map<const Eigen::VectorXd> position_weights() const { return {core_.position_weights(), L()}; }  ///< a
  Eigen::Map<const Eigen::VectorXd> head_outputs() const { return {core_.head_outputs(), H()}; }  ///< o = ∂ŷ/∂c
  double output() const { return core_.output(); }  ///< ŷ
  Activation activation() const { return core_.activation(); }
  int H() const { return core_.H(); }
  int L() const { return core_.L(); }

 private:
  kernel::AttentionCore<double, kernel::DynamicSizes> core_;
};

/// kLanes samples at once, one per SIMD lane ("structure of arrays"): entry (h, ℓ) of an H×L
/// array is element h·L + ℓ of an array of Lanes, entry ℓ of an L-vector element ℓ. All
/// lanes share the readout c.
class AttentionKernelBatch : public kernel::AttentionCore<kernel::LaneArray<8>, kernel::DynamicSizes> {
 public:
  static constexpr int kLanes = 8;
  using Lanes = kernel::LaneArray<kLanes>;

  AttentionKernelBatch(Activation activation, int H, int L) : AttentionCore(activation, {H, L}) {}
  using AttentionCore::forward;
  void forward(const Lanes* S, const Lanes* g, const Eigen::VectorXd& c) { AttentionCore::forward(S, g, c.data()); }

  /// e^x lane by lane for x ≤ 0, within 1 ulp of std::exp for x ≥ −708; below −708 it
  /// returns e^−708 ≈ 3.3·10^-308 instead of a subnormal or 0. A NaN stays NaN.
  static Lanes exp_nonpositive(const Lanes& x) { return detail::exp_nonpositive<kLanes>(x); }
};

}  // namespace headspec
