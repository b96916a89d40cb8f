#pragma once
// The dense engine: online SGD with tokens in R^D (docs/model.md §1–4), the ground truth
// that the reduced and asymptotic engines are checked against.
#include <memory>
#include <vector>

#include "headspec/kernel.hpp"
#include "headspec/model.hpp"
#include "headspec/simulation.hpp"

namespace headspec {

class DenseEngine final : public SgdEngine {
 public:
  /// Coordinates are processed in chunks of this many (a multiple of the Gaussian
  /// group size): partial sums are added in chunk order, so the result does not depend
  /// on the number of threads.
  static constexpr int64_t kChunk = 1024;
  /// Below this many chunks a step is too short (< ~0.5 ms) for a parallel region to pay
  /// off (and a loaded machine makes its barriers far slower): such steps run on one thread.
  static constexpr int64_t kParallelChunks = 64;

  /// u_f = √D e_f, v* = √D e_{F+1}; keys k_h ~ N(0, q0 I_D) from the stream (seed, KeyInit).
  DenseEngine(const ModelSpec& model, int64_t D, uint32_t seed);

  void step(uint64_t n) override;
  OrderParameters order_parameters() const override;
  /// ε from fresh samples in the (H + F + 1)-dimensional projections (docs/model.md §5).
  MeanEstimate recorded_error(const OrderParameters& op, int test_samples) const override;
  bool diverged() const override { return diverged_; }
  /// Keys and readout: the rest is work space or fixed by (model, D, seed).
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  /// Keys, H rows of D (row-major); writable for tests that start from a given state.
  std::vector<double>& keys() { return keys_; }
  const std::vector<double>& keys() const { return keys_; }
  Eigen::VectorXd& readout() { return c_; }
  int64_t D() const { return D_; }
  /// The last sample drawn: its tokens (L rows of D, spike included) and target y.
  const std::vector<double>& last_tokens() const { return tokens_; }
  double last_target() const { return last_target_; }

  static EngineFactory factory(const ModelSpec& model, int64_t D);

 private:
  // One sample of step n, batch slot b: draws its tokens into tokens_, forms the
  // gradient coefficients G = r J (H×L) in G_, adds r·o to the readout gradient, and does
  // target_h −= scale Σ_ℓ G_hℓ x_ℓ (target is H × D). No allocation.
  void sample_update(uint64_t n, int b, double scale, double* target);
  // Its three passes: per chunk of coordinates, then once, then per chunk again.
  void draw_chunk_and_score(uint64_t n, uint32_t base, int lstar, int64_t ch);
  void forward_and_coefficients(int lstar, double xi);
  void update_chunk(int64_t ch, double scale, double* target) const;

  ModelSpec model_;  // owned: an engine outlives the flags it was made from
  int64_t D_;
  int F_, H_, L_;
  uint32_t seed_;
  int64_t chunks_;
  std::vector<double> keys_;     // H × D
  std::vector<double> tokens_;   // L × D, the current sample
  std::vector<double> batch_grad_;  // H × D, mini-batch accumulator (B > 1 only)
  std::vector<double> partial_;  // chunks × H × L partial scores
  Eigen::VectorXd c_, c_grad_;
  AttentionKernel kernel_;
  RowMatrix S_, G_, J_;
  Eigen::VectorXd g_, theta_;
  double last_target_ = 0;
  bool diverged_ = false;
};

}  // namespace headspec
