#pragma once
// The `laplace` method of the theory engine (docs/model.md §6, "Laplace quadrature"):
// the expectations of the rates' integrands (laplace_expression.hpp) for softmax and
// softmax-1 with H ≤ 2 heads and the value channel integrated out, without sampling.
//
// Z_h^{−a} = 1/Γ(a) ∫_0^∞ u^{a−1} e^{−u Z_h} du turns e^{−Σ_h u_h Z_h} into a product over
// positions, which are independent given θ: the background positions' scores are N(0, Q),
// the relevant one's N(Mθ, Q). So the expectation of a term Π_h Z_h^{−a_h} Π_j Σ_ℓ m_j(ℓ) is,
// for every (u_1, u_2), a sum over the ways of putting the sums on distinct positions of
// products of one-position integrals ψ[m](u) = E[m(s) e^{−Σ_h u_h e^{s_h}}] (H-dimensional
// Gauss–Hermite), and then an integral over u (trapezoid rule in log u: the integrands are
// analytic there, so its error falls exponentially with the step). Quadrature error ≈ 10^{-8}
// of the rates at the seed Fig. 1 states (docs/theory.md §2); nothing is random.
#include <Eigen/Dense>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"
#include "laplace_expression.hpp"

namespace headspec::laplace {

struct Positions;  // the positions' nodes at a state (laplace_quadrature.cpp)

// The relevant position's kinds: one per image θ of the prior's atoms (discrete priors), in
// groups of 2^k, k the sign-symmetric directions, image σ of a group with direction
// dirs[j] negated where bit j of σ is set — so that summing a group as a binary tree gives
// exactly 0 for a quantity odd in θ_f when nothing else depends on θ_f (M_{:,f} = 0); or one
// Gaussian kind for the gauss prior (λ_ℓ* = ζ + θ ~ N(0, I + diag ν)).
struct RelevantImages {
  std::vector<double> weight;
  std::vector<Eigen::VectorXd> theta;
  int group = 1;
};

class LaplaceQuadrature {
 public:
  /// The model must be one the method covers (check_laplace_options says so to the user).
  /// nodes: Gauss–Hermite nodes per dimension of a position's scores; step: of the rule in log u
  /// (TheoryOptions::quadrature_nodes, quadrature_step).
  LaplaceQuadrature(const ModelSpec& model, int nodes, double step);
  /// Whether the model is one the method covers (softmax or softmax-1, H ≤ 2, F ≤ 8).
  static bool covers(const ModelSpec& model);

  /// The integrands' expectations at op, in RateIntegrands order: |e|², μ_h (H), Σ P λ (H·F),
  /// then per pair h ≤ g the overlap drift, Σ Φ·Φ and |e|² Σ Φ·Φ + 2 Σ P P.
  std::vector<double> expectations(const OrderParameters& op) const;
  /// What expectations(op) allocates at its peak (bytes: the decay matrices, the ψ grids and
  /// their powers) and computes (terms: multiply-adds of the one-position integrals and the
  /// u sums), from the rules' sizes at op and before anything is allocated. Both grow with the
  /// scores' spread (nodes ∝ sd, u grid ∝ variance), without bound on a diverging state.
  struct Cost {
    double bytes = 0, terms = 0;
  };
  Cost cost(const OrderParameters& op) const;
  /// Which slices of a one-position integral ψ(u_1, u_2) the terms read: all of it, or only
  /// u_1 = 0, or only u_2 = 0 (a term without Z_h is its integrand at u_h = 0).
  static constexpr int kFirstZero = 1, kSecondZero = 2, kWhole = 4;
  using Grid = Eigen::ArrayXXd;  ///< a function of (u_1, u_2): rows u_1, columns u_2 (one column for H = 1)

 private:
  struct Use {
    int shape;
    double coefficient;
    std::array<int8_t, kMaxHeads> readout;
  };
  // Π_h Z_h^{−a_h} Π_j Σ_ℓ m_j(ℓ): for every partition of the sums, its blocks' monomials.
  struct Shape {
    std::array<int8_t, kMaxHeads> inverse_normaliser;
    std::vector<std::vector<int>> partitions;
  };
  void add_integrand(const Expression& e);
  // ψ[m] of every monomial at the background (psi_b) and at the relevant position (psi_r).
  void one_position_integrals(const Positions& p, const std::vector<Eigen::ArrayXd>& u,
                              std::vector<Grid>& psi_b, std::vector<Grid>& psi_r) const;
  // E[Π_h Z_h^{−a_h} Π_j Σ_ℓ m_j(ℓ)] from the ψ: the partitions' products, then the u integrals.
  // phi_b_power[k] = ψ_bg[1]^k.
  double shape_value(const Shape& shape, const std::vector<Grid>& psi_b, const std::vector<Grid>& psi_r,
                     const std::vector<Grid>& phi_b_power, const std::vector<Eigen::ArrayXd>& u, const Grid& tail) const;
  int monomial_id(const Monomial& m);
  int shape_id(const Term& t);

  ModelSpec model_;
  int nodes_;
  double step_;
  std::vector<std::vector<Use>> integrands_;
  std::vector<Shape> shapes_;
  std::vector<Term> shape_terms_;
  std::vector<Monomial> monomials_;
  std::vector<int> need_;  // per monomial: the kFirstZero | kSecondZero | kWhole its terms read
  std::array<int, kMaxHeads> max_power_{};  // the largest power of E_h in a monomial
  RelevantImages images_;                    // discrete priors: the relevant position's θ images
};

}  // namespace headspec::laplace
