#pragma once
// Linearisation of the theory's ODE (docs/model.md §6–7) at the unspecialised fixed point: the
// symmetric state in which every head has the same overlaps and no head has an overlap with
// a flipping direction. Its most unstable eigenvalue sets how fast a small spread of the
// heads along a flipping direction grows, hence the specialisation time (docs/model.md §10).
//
// The fixed-sample Monte Carlo right-hand side of TheoryEngine is smooth but not exactly
// symmetric: the samples of θ_f = ±√ν_f and of the heads' noise w are not balanced, so
// M_{:,f} = 0 is not invariant and the bias O(1/√N) of the vector field drives the spread
// (docs/theory.md §4). SymmetrisedTheory averages the right-hand side over the symmetry
// group of the model (head permutations × sign flips of the prior's symmetric directions):
// G(x) = (1/|G|) Σ_g g⁻¹ F(g x). Each term is an unbiased estimate of the exact right-hand
// side, which is equivariant, so G is as accurate as F and exactly equivariant: the
// symmetric subspace is invariant and the Jacobian at a symmetric state splits exactly into
// the symmetry sectors.
#include <Eigen/Dense>
#include <atomic>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/theory_engine.hpp"

namespace headspec {

/// The right-hand side of TheoryEngine (value channel integrated out, docs/model.md §7) averaged
/// over the model's symmetry group — with the plain method; the symmetric methods' right-hand
/// side is exactly equivariant as it is and is used unchanged.
class SymmetrisedTheory {
 public:
  /// Refuses (UsageError naming --H) a group of more than 1024 elements. Once `stop` (if not
  /// null) is set, the next rate() throws Interrupted.
  SymmetrisedTheory(const ModelSpec& model, const TheoryOptions& options, const std::atomic<bool>* stop = nullptr);

  const TheoryEngine& engine() const { return engine_; }
  const StateLayout& layout() const { return engine_.layout(); }
  std::size_t group_size() const { return actions_.size(); }
  /// Directions f whose sign the prior leaves invariant (flip: f ≥ 2; gauss: every f).
  const std::vector<int>& symmetric_directions() const { return flipped_; }

  /// G(x); error (if not null) receives the group mean of ε = E[r²].
  void rate(const double* x, double* out, double* error = nullptr) const;
  /// The group average of the state, (1/|G|) Σ_g g x: its projection on the symmetric subspace.
  void symmetrise(double* x) const;
  /// Packed coordinates that move: all but R (dR/dt = 0 with the value channel integrated out).
  const std::vector<std::size_t>& free_coordinates() const { return free_; }
  /// CSV-style name of packed coordinate i: M_h_f, Q_h_g, c_h (1-based).
  std::string coordinate_name(std::size_t i) const;

 private:
  // One group element acting on a packed state: (g x)[i] = sign[i] · x[source[i]].
  struct Action {
    std::vector<std::size_t> source;
    std::vector<double> sign;
    std::vector<std::size_t> inverse_source;
  };
  static Action action_of(const StateLayout& lay, const std::vector<int>& perm, const std::vector<double>& sign);
  TheoryEngine engine_;
  std::vector<int> flipped_;
  std::vector<Action> actions_;
  std::vector<std::size_t> free_;
  const std::atomic<bool>* stop_;
};

struct LinearisationSpec {
  int64_t mc = 100000;     ///< Monte Carlo samples N (fixed samples)
  uint32_t seed = 1;       ///< Monte Carlo stream
  double dt = 0.5;         ///< RK4 step of the approach to the fixed point and of the growth check
  double T_max = 300;      ///< longest approach (Newton's method then finds the fixed point)
  int64_t approach_mc = 0; ///< samples of the approach (0: mc); Newton and the Jacobian use mc
  double settle = 1e-9;    ///< the approach stops once every |rate| is below this; Newton then refines
  int newton_iterations = 20;
  double fd_step = 1e-4;   ///< central finite-difference step of the Jacobian
  int direction = -1;      ///< flipping direction f (0-based) of the spread mode; −1: the first symmetric one
  SamplingMethod method = SamplingMethod::Plain;  ///< --mc-method (Plain: averaged over the group here)
  const std::atomic<bool>* stop = nullptr;  ///< once set, the study throws Interrupted (Python's Ctrl-C)
  /// Laplace: its rule's resolution (TheoryOptions; the defaults unless a convergence check asks).
  int quadrature_nodes = TheoryOptions{}.quadrature_nodes;
  double quadrature_step = TheoryOptions{}.quadrature_step;
  /// The engine's options: mc samples, seed, method (fixed samples, value channel integrated out).
  TheoryOptions theory_options() const {
    TheoryOptions o;
    o.samples = mc;
    o.seed = seed;
    o.method = method;
    o.quadrature_nodes = quadrature_nodes;
    o.quadrature_step = quadrature_step;
    return o;
  }
  /// Throws UsageError naming the flag (--mc, --seed, --dt, --T-max, --settle, --fd-step, --direction).
  void validate(const ModelSpec& model) const;
};

/// One point of the approach to the fixed point (symmetric, so head 1 stands for all).
struct ApproachPoint {
  double t = 0;
  double loss = 0;
  double max_rate = 0;  ///< max |G(x)| over the free coordinates
  OrderParameters op;
};

struct LinearisationResult {
  std::size_t group_size = 0;
  int direction = 0;                   ///< 0-based flipping direction of the spread mode
  std::vector<ApproachPoint> approach; ///< from the symmetric initial state M = 0, Q = q0 I, c = c(0)
  bool settled = false;                ///< the approach reached max |rate| < settle by T_max
  double settled_at = 0;
  int newton_iterations = 0;
  double residual = 0;                 ///< max |G| at the fixed point (free coordinates)
  double loss = 0;                     ///< ε at the fixed point
  std::vector<double> state;           ///< the fixed point, packed
  OrderParameters fixed_point;
  std::vector<std::string> coordinates;      ///< names of the free coordinates (rows/columns of jacobian)
  Eigen::MatrixXd jacobian;                  ///< ∂G_i/∂x_j at the fixed point, free coordinates
  Eigen::VectorXcd eigenvalues;              ///< sorted by decreasing real part
  Eigen::MatrixXcd eigenvectors;             ///< columns, same order, unit norm
  double odd_even_coupling = 0;              ///< max |J| between the flip-odd M_{:,f} and the rest (0 by symmetry)
  double spread_rate = 0;                    ///< λ⁺: eigenvalue of the zero-sum modes of M_{:,f}
  double spread_rate_half_step = 0;          ///< the same with half the FD step (a check of the FD error)
  Eigen::VectorXd spread_mode;               ///< its eigenvector (free coordinates, unit norm)
  /// The raw (unsymmetrised) engine's rate along the spread direction v = (e_M1f − e_M2f)/√2
  /// at the fixed point: its fixed-sample bias, 0 for the exact right-hand side. A spread
  /// driven by it alone reaches |raw_spread_bias|/λ⁺ times e^{λ⁺t}.
  double raw_spread_bias = 0;
};

/// Approaches the fixed point from the symmetric initial state with RK4 on the symmetrised
/// right-hand side, refines it by Newton's method, and linearises there.
LinearisationResult linearise(const ModelSpec& model, const LinearisationSpec& spec);

/// The Jacobian ∂G/∂x of the symmetrised right-hand side at packed state x (free
/// coordinates, central differences with step h).
Eigen::MatrixXd symmetrised_jacobian(const SymmetrisedTheory& theory, const std::vector<double>& x, double h);

struct GrowthCheck {
  double epsilon = 0;               ///< initial spread ‖M_{:,f} − mean‖
  std::vector<double> t, spread;    ///< the records
  double fitted_rate = 0;           ///< least-squares slope of ln spread against t over all records
  double first_rate = 0, last_rate = 0;  ///< slopes over the first and the last quarter of the records
};

/// Integrates the symmetrised ODE (RK4, step spec.dt) from the fixed point plus a spread
/// epsilon of M_{:,f} along the zero-sum direction of heads 1 and 2, up to T, recording
/// every record_every, and fits the growth rate of the spread.
GrowthCheck growth_check(const ModelSpec& model, const LinearisationSpec& spec, const LinearisationResult& lin,
                         double epsilon, double T, double record_every);

/// The growth rate of the spread along the unspecialised trajectory. With H = 2 the flip-odd,
/// swap-odd sector is the one direction v = (M_12 − M_22)/√2, so to linear order a spread s
/// obeys ds/dt = a(t) s with a(t) = vᵀ ∂G/∂x(x(t)) v at the symmetric state x(t) of time t,
/// and s(t) = s(0) exp ∫₀ᵗ a. a(∞) is λ⁺ at the fixed point.
/// The finite-D noise of the spread (docs/model.md §12) is there too: σ²(t) = vᵀ Σ(x(t)) v, so
/// that at D a spread obeys ds = a s dt + σ D^{-1/2} dW.
struct SpreadGrowth {
  std::vector<double> t, rate, log_growth;  ///< a(t) and ∫₀ᵗ a (trapezoid over the records)
  std::vector<double> split_diffusion;      ///< σ²(t) = vᵀ Σ(x(t)) v
  std::vector<OrderParameters> state;       ///< x(t)
};

/// x(t) from the D → ∞ initial state (RK4, step spec.dt, spec.mc samples), a(t) by central
/// differences of step spec.fd_step and σ²(t) from spec.mc plain samples (TheoryDiffusion) every
/// record_every, up to T.
SpreadGrowth spread_growth_along(const ModelSpec& model, const LinearisationSpec& spec, int direction, double T,
                                 double record_every);

/// The deterministic part of the specialisation time (docs/model.md §10): the first t at which the
/// spread of M_{:,f} exceeds delta when the symmetrised ODE (RK4, step spec.dt) starts from the
/// D → ∞ initial state (M = 0, Q = q0 I, c = c(0)) plus a spread s0 of M_{:,f} along the
/// zero-sum direction of heads 1 and 2; ln spread is interpolated linearly between steps.
/// NaN if not reached by spec.T_max.
double threshold_time(const ModelSpec& model, const LinearisationSpec& spec, int direction, double s0, double delta);

}  // namespace headspec
