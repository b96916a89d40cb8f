#pragma once
// The samples of the theory's symmetric Monte Carlo method (docs/model.md §6, "Symmetric
// Monte Carlo"). Each orbit holds one base sample — θ, and ξ_ℓ ∈ R^H for every position
// (with the value channel sampled also g_ℓ and the label noise ξ) — and its images under the
// model's symmetry group (symmetry_group.hpp): θ's symmetric directions flipped, the heads'
// components of ξ_ℓ permuted; with the value channel sampled also the value sign
// (g, ξ) → (−g, −ξ), the image of R → −R, under which R = 0 is invariant (docs/theory.md §1).
// The latent projections λ are integrated out given the scores:
//   s_ℓ = Mθ 1[ℓ = ℓ*] + R g_ℓ + Q̃^{1/2} ξ_ℓ,   Q̃ = Q − RRᵀ,
//   E[λ_ℓ | s, g, θ] = θ 1[ℓ = ℓ*] + Mᵀ Q̃^{+1/2} ξ_ℓ,
// so a sample carries H + (g sampled) numbers per position instead of F + H (+ 1). fill_batch
// writes the samples in the plain method's layout — (λ̄_ℓ, w̄_ℓ) with s_ℓ = M λ̄_ℓ + w̄_ℓ (+ R g_ℓ)
// — so that every rate pass of the plain method (theory_rates.hpp) serves both.
#include <cstdint>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/symmetry_group.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_rates.hpp"

namespace headspec::theory_rates {

/// The symmetric square root C of a positive semi-definite Q and the pseudo-inverse of C
/// (eigenvalues below 1e-13 of the largest left out): the conditioning of λ on the scores
/// (here and in the laplace method, laplace_quadrature.cpp).
void symmetric_roots(const Eigen::MatrixXd& Q, Eigen::MatrixXd& C, Eigen::MatrixXd& C_inverse);

/// What a state contributes to the samples: λ̄_ℓ = θ 1[ℓ = ℓ*] + B ξ_ℓ and w̄_ℓ = D ξ_ℓ.
struct Conditioning {
  RowMatrix B;  ///< F×H, Mᵀ Q̃^{+1/2}
  RowMatrix D;  ///< H×H, Q̃^{1/2} − M B
  /// From the state; R is used only with the value channel sampled.
  static Conditioning of(const OrderParameters& op, bool sampled);
};

class SymmetricSamples {
 public:
  /// options.samples rounded up to whole orbits (at least two, for a standard error); with
  /// the Sobol method to `randomisations` sets of a multiple of kLanes orbits each.
  SymmetricSamples(const ModelSpec& model, const TheoryOptions& options);
  /// The orbits of that rounding, without drawing anything.
  static int64_t orbits_for(const TheoryOptions& options, int orbit_size);
  /// The Lanes a Fixed-mode instance keeps (every group's base samples), without drawing.
  static int64_t stored_lanes(const ModelSpec& model, const TheoryOptions& options);

  const SymmetryGroup& group() const { return group_; }
  /// The orbit of a model and value channel: the group's elements, times 2 value signs when sampled.
  static int orbit_size_of(const ModelSpec& model, const TheoryOptions& options);
  int orbit_size() const { return group_.size() * value_signs_; }
  /// The elements of an orbit per head permutation, e = p · sign_slots() + s: the group's sign
  /// flips σ = s mod sign_count(), the value sign s / sign_count() (0 or, sampled, 1).
  int sign_slots() const { return group_.sign_count() * value_signs_; }
  int64_t orbits() const { return orbits_; }
  int64_t samples() const { return orbits_ * orbit_size(); }
  /// Orbits are taken kLanes at a time, orbit 8q + j in lane j of group q.
  int64_t orbit_groups() const { return (orbits_ + kLanes - 1) / kLanes; }
  /// Numbers per base sample: θ (F), ξ (L·H, position-major), [g (L), label noise].
  int base_width() const { return base_width_; }
  /// Sobol: the independent randomisations, orbits o·n … o·n + n − 1 the o-th (n =
  /// orbits_per_randomisation()); 0 for Monte Carlo base samples.
  int randomisations() const { return randomisations_; }
  int64_t orbits_per_randomisation() const { return per_randomisation_; }

  /// The base samples of group q, base_width() lanes (zeros past the last orbit): the stored
  /// ones (Fixed mode), or drawn into `scratch` (base_width() lanes and as many doubles in aos).
  const Lanes* group_base(int64_t q, uint64_t draw, double* aos, Lanes* scratch) const;
  /// Element e of the group's orbits, lane by lane, in the plain layout (TheoryEngine::draw_batch):
  /// θ'_f = ±θ_f, ξ'_ℓh = ξ_ℓ,perm[h], then λ̄ and w̄ of the conditioning.
  void fill_element(const Lanes* base, int e, const Conditioning& cond, Lanes* soa) const;

 private:
  void draw_base(int64_t o, uint64_t draw, double* out) const;
  // Sobol: kLanes orbits from o, whose point indices are consecutive within one randomisation.
  void quasi_random_bases(int64_t o, uint64_t draw, double* aos) const;
  void draw_group(int64_t q, uint64_t draw, double* aos, Lanes* out) const;

  ModelSpec model_;
  SymmetryGroup group_;
  bool sampled_;
  int value_signs_;  // 2 with the value channel sampled, else 1
  uint32_t seed_;
  int randomisations_ = 0;
  int first_set_ = 0;  // the scrambling of this engine's set 0 (only_randomisation)
  int64_t per_randomisation_ = 0;
  int64_t orbits_;
  int base_width_;
  int quasi_dimension_ = 0;  // Sobol coordinates per base sample
  std::vector<double> helmert_;  // H×H, row k the k-th Helmert vector (row 0 = 1/√H)
  std::vector<int> perms_;     // the group's permutations, H numbers each
  std::vector<double> signs_;  // the sign of every direction (F) under every σ
  std::vector<Lanes> stored_;  // Fixed mode: every group's base samples
};

}  // namespace headspec::theory_rates
