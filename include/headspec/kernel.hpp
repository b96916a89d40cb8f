#pragma once
// The per-sample computation shared by every engine (MODEL.md §3–4, §7): from the
// low-dimensional projections of one sample — scores S (H×L), values g (L) — to the
// attention A, the output ŷ and the Jacobian ∂ŷ/∂S. Engines only differ in how they
// produce S and g and how they apply the resulting updates.
#include <Eigen/Dense>
#include <vector>

#include "headspec/activation.hpp"

namespace headspec {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class AttentionKernel {
 public:
  AttentionKernel(Activation activation, int H, int L);

  /// Forward pass for scores S (H×L), values g (L) and readout c (H). Every
  /// normalisation uses log-sum-exp, so scores of any size give finite weights.
  void forward(const RowMatrix& S, const Eigen::VectorXd& g, const Eigen::VectorXd& c);

  /// out = Φ v, i.e. out_hℓ = Σ_ℓ' Φ_hℓ,ℓ' v_ℓ' where ∂ŷ/∂s_hℓ = Σ_ℓ' Φ_hℓ,ℓ' g_ℓ'
  /// (MODEL.md §7). With v = g this is J = ∂ŷ/∂S; with v = e it is P of §7.
  void apply_jacobian(const Eigen::VectorXd& v, RowMatrix& out) const;

  /// One entry Φ_hℓ,ℓ' of the linear map above (MODEL.md §7).
  double phi(int h, int l, int lp) const;

  /// out_hh' = Σ_ℓ Σ_ℓ' Φ_hℓ,ℓ' Φ_h'ℓ,ℓ' (H×H, symmetric): the Gram matrix of the rows of Φ
  /// that the SGD-noise term of dQ/dt needs when g is integrated out (MODEL.md §7).
  /// O(H²L) in closed form; equal to the sum of phi() products.
  void jacobian_gram(Eigen::MatrixXd& out) const;

  const RowMatrix& attention() const { return A_; }          ///< A = σ(S), H×L
  const Eigen::VectorXd& position_weights() const { return a_; }  ///< a_ℓ = Σ_h c_h A_hℓ
  const Eigen::VectorXd& head_outputs() const { return o_; }  ///< o_h = Σ_ℓ A_hℓ g_ℓ = ∂ŷ/∂c_h
  double output() const { return yhat_; }                     ///< ŷ = Σ_h c_h o_h
  Activation activation() const { return activation_; }
  int H() const { return H_; }
  int L() const { return L_; }

 private:
  Activation activation_;
  int H_, L_;
  RowMatrix A_;
  Eigen::VectorXd a_, o_, c_;
  double yhat_ = 0;
};

/// The same maths as AttentionKernel for kLanes samples at once, one sample per SIMD lane
/// ("structure of arrays"): entry (h, ℓ) of an H×L array is element h·L + ℓ of an array of
/// Lanes, entry ℓ of an L-vector element ℓ. All lanes share the readout c. The exponential
/// is exp_nonpositive (within an ulp of std::exp) and a row is normalised by one reciprocal,
/// so results agree with AttentionKernel's to rounding, not bit for bit.
class AttentionKernelBatch {
 public:
  static constexpr int kLanes = 8;
  using Lanes = Eigen::Array<double, kLanes, 1>;

  AttentionKernelBatch(Activation activation, int H, int L);

  /// Forward pass for scores S (H×L) and readout c (H). With g (L) it also forms o and ŷ;
  /// g = nullptr skips them (the value channel integrated out).
  void forward(const Lanes* S, const Lanes* g, const Eigen::VectorXd& c);

  /// out = Φ v (H×L from L), as AttentionKernel::apply_jacobian.
  void apply_jacobian(const Lanes* v, Lanes* out) const;

  /// Σ_ℓ Φ_hℓ·Φ_h'ℓ for h ≤ h' (the upper triangle row by row, H(H+1)/2 entries), as
  /// AttentionKernel::jacobian_gram.
  void jacobian_gram(Lanes* out) const;

  const Lanes* attention() const { return A_.data(); }          ///< A, H×L
  const Lanes* position_weights() const { return a_.data(); }  ///< a_ℓ = Σ_h c_h A_hℓ, L
  const Lanes* head_outputs() const { return o_.data(); }      ///< o_h, H (after forward with g)
  const Lanes& output() const { return yhat_; }                ///< ŷ (after forward with g)
  int H() const { return H_; }
  int L() const { return L_; }

  /// e^x lane by lane for x ≤ 0 (every exponent of a log-sum-exp normalisation), within
  /// 1 ulp of std::exp for x ≥ −708; below −708 it returns e^−708 ≈ 3.3·10^-308 instead of
  /// a subnormal or 0. A NaN stays NaN.
  static Lanes exp_nonpositive(const Lanes& x);

 private:
  Activation activation_;
  int H_, L_;
  std::vector<Lanes> A_, a_, o_, row_max_;
  Lanes yhat_;
  Eigen::VectorXd c_;
};

}  // namespace headspec
