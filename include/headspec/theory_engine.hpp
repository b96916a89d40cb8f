#pragma once
// The asymptotic theory (docs/model.md §6–7): the right-hand side of the order-parameter ODE,
// as a function of the state (M, R, Q, c), with its expectations taken by the method of
// --mc-method (src/engines/expectation/: plain, symmetric and sobol Monte Carlo, laplace
// quadrature). The per-sample maths is AttentionKernel's (AttentionKernelBatch: a few samples
// at a time). Integrators live in theory_integrator.hpp and know nothing of attention.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "headspec/kernel.hpp"
#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec {

namespace expectation {
class ExpectationMethod;
}

/// How the Monte Carlo samples are chosen (seed Fig. 8 compares the two).
enum class MonteCarloMode {
  Fixed,     ///< one set of samples reused at every evaluation: a smooth, deterministic right-hand side
  Resample,  ///< fresh samples for every value of the draw index
};

/// How the value channel g is treated (docs/model.md §7).
enum class ValueChannel {
  Integrated,  ///< R ≡ 0: g integrated out exactly (R of the state is ignored, dR/dt = 0)
  Sampled,     ///< general path: g is sampled with the other projections (any R)
};

/// How the samples of an evaluation are made (docs/model.md §6, "Symmetric Monte Carlo").
enum class SamplingMethod {
  Plain,      ///< independent samples of (θ, λ, w[, g, ξ])
  Symmetric,  ///< orbits of the symmetry group, λ integrated out given the scores, canonical head order
  Sobol,      ///< the same with the base samples from scrambled Sobol points, in independent randomisations
  Laplace,    ///< no samples: the expectations by quadrature (softmax, H ≤ 2, value channel integrated out)
  Auto,       ///< Laplace where it applies (resolved_method), Sobol otherwise
};

/// --mc-method: auto | plain | symmetric | sobol | laplace (UsageError naming the flag otherwise).
SamplingMethod parse_sampling_method(const std::string& name);
const char* to_string(SamplingMethod method);

struct TheoryOptions {
  int64_t samples = 10000;  ///< N (Symmetric: rounded up to whole orbits)
  MonteCarloMode mode = MonteCarloMode::Fixed;
  SamplingMethod method = SamplingMethod::Plain;
  int randomisations = 8;  ///< Sobol: independent scramblings, each of a multiple of 8 orbits
  /// Sobol: ≥ 0 evaluates randomisation r alone (as it is within all of them), −1 all.
  int only_randomisation = -1;
  ValueChannel channel = ValueChannel::Integrated;
  uint32_t seed = 1;  ///< Monte Carlo stream (seed, MonteCarlo, lane n, step draw)
  /// Gradient flow (docs/model.md §6): the η² term dropped, time τ = ηt.
  bool flow = false;
  /// Laplace: Gauss–Hermite nodes per dimension of a position's scores while their standard
  /// deviations are at most 2 (in proportion beyond), and the step of the trapezoid rule in log u
  /// (docs/model.md §6, "Laplace quadrature"; docs/theory.md §2).
  int quadrature_nodes = 24;
  double quadrature_step = 0.5;
  /// The most one evaluation may allocate (bytes; 0: a quarter of the default --max-memory)
  /// and compute (laplace's terms, LaplaceQuadrature::cost): laplace's rules grow with the
  /// scores' spread, so an exploding state would need unbounded memory and time. A state past
  /// either is an exploded one (docs/model.md §6, "Divergence").
  double max_evaluation_bytes = 0;
  double max_evaluation_terms = 3e11;
};

/// The method an engine with these options uses: options.method, and for Auto laplace where its
/// conditions hold (softmax or softmax-1, H ≤ 2, value channel integrated out, fixed "samples"),
/// sobol otherwise (docs/theory.md §2, "Choosing a method").
SamplingMethod resolved_method(const ModelSpec& model, const TheoryOptions& options);

/// The options of laplace's error estimate (--mc-error, docs/theory.md §2): the same with a
/// coarser rule, two thirds of the nodes and 1.5 times the step in log u, whose difference
/// from the rule asked for bounds that rule's error where the rule has converged.
TheoryOptions coarser_rule(const TheoryOptions& options);

/// The laplace method's conditions (ParameterError naming --mc-method otherwise): softmax or
/// softmax-1, H ≤ 2, the value channel integrated out, fixed "samples".
void check_laplace_options(const ModelSpec& model, const TheoryOptions& options);

/// The symmetric starting state M = 0, R = 0, Q = q0 I, c = c(0): the D → ∞ limit of the
/// initial state (docs/model.md §4), where the unspecialised trajectory starts.
OrderParameters unspecialised_state(const ModelSpec& model);

/// Packing of the state into a flat vector, the integrators' state type:
/// [M row-major (H·F), R (H), Q upper triangle row by row (H(H+1)/2), c (H, learned readout only)].
class StateLayout {
 public:
  StateLayout(int H, int F, bool learned_readout);
  std::size_t size() const { return size_; }
  int H() const { return H_; }
  int F() const { return F_; }
  bool learned_readout() const { return learned_; }
  std::size_t m_index(int h, int f) const { return static_cast<std::size_t>(h * F_ + f); }
  std::size_t r_index(int h) const { return static_cast<std::size_t>(H_ * F_ + h); }
  std::size_t q_index(int h, int g) const;  ///< any order of (h, g)
  std::size_t c_index(int h) const { return q_end_ + static_cast<std::size_t>(h); }

  void pack(const OrderParameters& op, double* x) const;
  /// The readout of a fixed-readout state is `fixed_c`.
  OrderParameters unpack(const double* x, const Eigen::VectorXd& fixed_c) const;

 private:
  int H_, F_;
  bool learned_;
  std::size_t q_end_, size_;
};

/// One evaluation of the right-hand side.
struct TheoryEvaluation {
  std::vector<double> rate;         ///< d state/dt, in StateLayout order
  std::vector<double> rate_stderr;  ///< Monte Carlo standard error of every entry of rate
  double error = 0;                 ///< ε = E[r²] (docs/model.md §4)
  double error_stderr = 0;
  double max_abs_rate() const;
};

class TheoryEngine {
 public:
  /// Samples are processed in blocks of this many, kLanes at a time (AttentionKernelBatch);
  /// within a block each lane sums its samples in order, the block's sum adds the lanes in
  /// lane order, and the blocks are added in block order, so results do not depend on the
  /// number of threads.
  static constexpr int64_t kBlock = 256;
  /// An evaluation starts threads only from this many blocks (8192 samples) on: below, one
  /// evaluation takes a fraction of a millisecond, less than waking a team costs on a busy
  /// machine (bench/threads_under_load.py). The blocks, and so the bits, are the same.
  static constexpr int64_t kParallelBlocks = 32;

  TheoryEngine(const ModelSpec& model, const TheoryOptions& options);

  const StateLayout& layout() const { return layout_; }
  const ModelSpec& model() const { return model_; }
  const TheoryOptions& options() const { return options_; }

  /// The right-hand side at state op (docs/model.md §6; §7 with ValueChannel::Integrated).
  /// `draw` selects the samples in Resample mode and is ignored in Fixed mode.
  /// Time is t = (samples seen)/D as for `simulate`, so with a mini-batch B the rates of
  /// docs/model.md §6 (written per SGD step) are divided by B.
  /// t: the time, for the schedule's factor g(t) (docs/model.md §4; without one it is not used).
  void evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t = 0) const;
  /// Same, from a packed state.
  void evaluate(const double* x, uint64_t draw, TheoryEvaluation& out, double t = 0) const;
  /// Both throw DivergenceError (at t) instead of evaluating at a state that has exploded:
  /// not finite, an order parameter past kExplodedScale times the model's scale, or (laplace)
  /// rules that would need more than the options' max_evaluation_bytes or _terms (docs/model.md
  /// §6, "Divergence"). Checked before anything is allocated.
  void check_evaluable(const OrderParameters& op, double t) const;
  /// An order parameter of magnitude past kExplodedScale · max(1, q0, max ν_f) has exploded:
  /// over three orders of magnitude above the largest ν_f² of the figures (400).
  static constexpr double kExplodedScale = 1e6;

  /// The covariance over the samples of one sample's rates (the integrand of the rates,
  /// StateLayout order, per unit t): Σ of the stochastic theory (docs/model.md §12), in
  /// `cov` (size()×size()). Needs the plain method with the value channel sampled, so that
  /// every random quantity of a sample is drawn and none is averaged out (throws
  /// std::logic_error otherwise). Blocks are added in block order: the same bits whatever
  /// the thread count.
  void rate_covariance(const OrderParameters& op, Eigen::MatrixXd& cov, double t = 0) const;

  /// The readout of a state whose readout is fixed (sum, mean).
  const Eigen::VectorXd& fixed_readout() const { return fixed_c_; }

  /// The samples an evaluation averages over (N, or N rounded up to whole orbits; 0 for laplace).
  int64_t samples_used() const;
  /// The same without building the engine (nothing is drawn).
  static int64_t samples_used(const ModelSpec& model, const TheoryOptions& options);
  /// The bytes of the samples an engine keeps (Fixed mode; plain sampling keeps them only
  /// up to 256 MB and draws them again otherwise), without building it: the run budget.
  static double stored_bytes(const ModelSpec& model, const TheoryOptions& options);
  /// The symmetry group's size with the Symmetric method (samples per orbit), 1 otherwise.
  int orbit_size() const;

 private:
  ModelSpec model_;
  TheoryOptions options_;
  StateLayout layout_;
  Eigen::VectorXd fixed_c_;
  // How the expectations are taken (src/engines/expectation/: one unit per --mc-method).
  std::shared_ptr<const expectation::ExpectationMethod> method_;
};

}  // namespace headspec
