#pragma once
// Online SGD on the MNIST detection task (docs/model.md §11): dense tokens in R^784 whose
// relevant token carries √ν p̂ for a random training digit p̂; the attention, loss and
// updates are those of docs/model.md §3–4, through the shared AttentionKernel.
#include <cstdint>
#include <vector>

#include "headspec/kernel.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/model.hpp"
#include "headspec/projection.hpp"
#include "headspec/simulation.hpp"

namespace headspec {

class MnistEngine final : public SgdEngine {
 public:
  /// Coordinates are processed in chunks of this many (a multiple of the Gaussian group
  /// size); partial sums are added in chunk order, so results do not depend on threads.
  static constexpr int64_t kChunk = 128;
  static constexpr int64_t D = kMnistPixels;
  /// Lane of the stream (seed, Data) that draws v*; the split uses lanes 0..9.
  static constexpr uint32_t kValueLane = 0xFFFF;

  /// Keys k_h ~ N(0, q0 I) from (seed, KeyInit, lane h) as in the dense engine; v* from
  /// (seed, Data, kValueLane), scaled to |v*|² = D. The model's prior is unused: the
  /// spike of a sample is √ν p̂. task and model must outlive the engine.
  MnistEngine(const MnistTask& task, const ModelSpec& model, double nu, uint32_t seed);

  void step(uint64_t n) override;
  /// M_hc = k_h·û_c/√D (the ten class directions, not orthogonal), R_h = k_h·v*/D, Q = KKᵀ/D.
  OrderParameters order_parameters() const override;
  /// The test error on test digits (test_error).
  MeanEstimate recorded_error(const OrderParameters& op, int test_samples) const override;
  /// The final keys (H × 784), as StateWriter doubles.
  std::string final_state() const override;
  bool diverged() const override { return diverged_; }
  /// Keys and readout: v* and the rest are fixed by (task, model, ν, seed) or work space.
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  /// Mean squared error on test digits with fresh noise (docs/model.md §11): with samples ≥ n_test
  /// sample n uses test digit n mod n_test, with fewer the digits are evenly spaced over the
  /// class-ordered test set; a sample's position and noise are numbers n of the stream
  /// (seed, Test), so every call sees the same test samples. The noise tokens enter only through k_h·z/√D and v*·z/√D, jointly
  /// Gaussian with covariance [[Q, R], [Rᵀ, |v*|²/D]] for fixed keys, and are drawn in that
  /// form: exact in distribution at D = 784, and cheap.
  MeanEstimate test_error(int samples) const;
  /// The test digits of test_error, in order: sample n uses entry n mod size.
  static std::vector<int> test_digits(int samples, int n_test);

  /// Keys, H rows of D (row-major); writable for tests that start from a given state.
  std::vector<double>& keys() { return keys_; }
  const std::vector<double>& keys() const { return keys_; }
  const std::vector<double>& value_direction() const { return vstar_; }
  const Eigen::VectorXd& readout() const { return c_; }
  double nu() const { return nu_; }
  const ModelSpec& model() const { return model_; }

 private:
  void sample_gradient(uint64_t n, int b, RowMatrix& G);
  void draw_tokens(uint64_t n, uint32_t base, int lstar, const double* spike);
  void sum_partial_scores();
  void add_tokens_times(double scale, const RowMatrix& coef, double* target) const;
  Eigen::MatrixXd background_root(const OrderParameters& op) const;
  struct SpikeContributions {
    Eigen::MatrixXd scores;  // H × test digits
    Eigen::VectorXd values;  // per test digit
  };
  SpikeContributions spike_contributions(const std::vector<int>& digits) const;

  const MnistTask& task_;
  ModelSpec model_;  // owned: an engine outlives the flags it was made from
  double nu_;
  int H_, L_;
  uint32_t seed_;
  int64_t chunks_;
  std::vector<double> keys_;        // H × D
  std::vector<double> vstar_;       // D
  std::vector<double> tokens_;      // L × D, the current sample
  std::vector<double> batch_grad_;  // H × D (B > 1 only)
  std::vector<double> partial_;     // chunks × (H + 1) × L partial scores and values
  Eigen::VectorXd c_, c_grad_;
  AttentionKernel kernel_;
  RowMatrix S_, G_, J_;
  Eigen::VectorXd g_;
  bool diverged_ = false;
};

/// One run of the MNIST study: its recorded trajectory (loss = test error), its final
/// keys and the specialisation time of every class direction (docs/model.md §10).
struct MnistRun {
  Trajectory trajectory;
  std::vector<double> keys;  ///< H × 784 at the end of the run
  std::vector<double> tau;   ///< τ_c^s, c = 0..9; NaN where never specialised
};

struct MnistStudySpec {
  double nu = 4;
  double delta = 1;  ///< specialisation threshold (docs/model.md §10: 1 for MNIST)
  SimulationSpec sim;  ///< D is ignored (always 784)
};

/// Runs spec.sim.runs runs in parallel (run k uses seed + k); the same numbers whatever
/// the number of threads. `checkpointing` as for run_sgd_runs (an interrupted run has
/// trajectory.interrupted set and no keys).
std::vector<MnistRun> run_mnist(const MnistTask& task, const ModelSpec& model, const MnistStudySpec& spec,
                                const ProgressFn& progress = {}, const Checkpointing* checkpointing = nullptr);

}  // namespace headspec
