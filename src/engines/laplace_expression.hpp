#pragma once
// The softmax theory's per-sample rates as polynomials in sums over positions (docs/model.md
// §6, "Laplace quadrature"). With A_hℓ = E_hℓ / Z_h, E_hℓ = e^{s_hℓ}, Z_h = Σ_ℓ E_hℓ (plus 1
// for softmax-1), every integrand of docs/theory.md §1 with the value channel integrated out
// is a sum of terms
//     coefficient · Π_h c_h^{k_h} · Π_h Z_h^{−a_h} · Π_j Σ_ℓ m_j(ℓ),
// each m_j a product of one position's quantities (E_h, s_h, E[λ_f | s], the indicator of the
// relevant position). The quadrature (laplace_quadrature.hpp) takes the expectation of such a
// term exactly up to quadrature error; this file only does the algebra, once per model shape.
#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace headspec::laplace {

constexpr int kMaxHeads = 2;       // the quadrature is H-dimensional in the normalisers
constexpr int kMaxDirections = 8;  // the parameter table's largest F

/// A product of one position's quantities: Π_h E_h^{exp_score[h]} s_h^{score[h]} Π_f λ_f^{lambda[f]},
/// times 1[ℓ = ℓ*] when relevant_only (λ_f stands for E[λ_f | s, θ], docs/model.md §6).
struct Monomial {
  std::array<int8_t, kMaxHeads> exp_score{};
  std::array<int8_t, kMaxHeads> score{};
  std::array<int8_t, kMaxDirections> lambda{};
  bool relevant_only = false;

  auto operator<=>(const Monomial&) const = default;
  Monomial operator*(const Monomial& other) const;
};

/// Π_h c_h^{readout[h]} Z_h^{−inverse_normaliser[h]} Π_j Σ_ℓ sums[j](ℓ), times `position`,
/// a factor of the position ℓ of an enclosing sum not taken yet.
struct Term {
  std::array<int8_t, kMaxHeads> inverse_normaliser{};
  std::array<int8_t, kMaxHeads> readout{};
  std::vector<Monomial> sums;  ///< sorted
  std::optional<Monomial> position;

  auto operator<=>(const Term&) const = default;
};

/// A sum of terms with their coefficients.
using Expression = std::map<Term, double>;

Expression operator+(const Expression& a, const Expression& b);
Expression operator*(const Expression& a, const Expression& b);
Expression operator*(double k, const Expression& a);
/// Σ_ℓ over the position factor of every term (each must have one).
Expression sum_over_positions(const Expression& a);

/// Position factors: A_h = E_h / Z_h, s_h, E[λ_f | s], 1[ℓ = ℓ*]; and the readout c_h.
Expression attention(int h);
Expression score(int h);
Expression latent(int f);
Expression relevant();
Expression readout(int h);

/// The integrands of the rates (docs/theory.md §1, value channel integrated out; softmax and
/// softmax-1 have the same ones): with e_ℓ = Σ_h c_h A_hℓ − 1[ℓ = ℓ*], μ_h = Σ_ℓ A_hℓ e_ℓ,
/// P_hℓ = c_h A_hℓ (e_ℓ − μ_h). Pairs (h ≤ g) in the order of the state's Q.
struct RateIntegrands {
  Expression squared_residual;             ///< |e|²
  std::vector<Expression> readout_drift;   ///< H: μ_h = E_g[r o_h]
  std::vector<Expression> key_drift;       ///< H·F: Σ_ℓ P_hℓ λ_ℓf
  std::vector<Expression> overlap_drift;   ///< pairs: Σ_ℓ P_hℓ s_gℓ + P_gℓ s_hℓ
  std::vector<Expression> jacobian_gram;   ///< pairs: Σ_ℓ Φ_hℓ·Φ_gℓ
  std::vector<Expression> residual_gram;   ///< pairs: |e|² Σ_ℓ Φ_hℓ·Φ_gℓ + 2 Σ_ℓ P_hℓ P_gℓ
};
RateIntegrands rate_integrands(int H, int F);

}  // namespace headspec::laplace
