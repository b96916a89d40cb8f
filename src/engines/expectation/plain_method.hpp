#pragma once
// The plain method (docs/model.md §6): independent samples of (θ, λ, w[, g, ξ]), kept in
// Fixed mode while they fit (kStoreLimit), drawn again otherwise; their mean and standard
// error. Also the samples of the stochastic theory's Σ (rate_covariance, plain_covariance.cpp).
#include <vector>

#include "../theory_evaluation.hpp"
#include "expectation_method.hpp"

namespace headspec::expectation {

class PlainMethod final : public ExpectationMethod {
 public:
  PlainMethod(const ModelSpec& model, const TheoryOptions& options);
  void evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const override;
  int64_t samples_used() const override { return options_.samples; }
  void rate_covariance(const OrderParameters& op, Eigen::MatrixXd& cov, double t) const override;

 private:
  using Lanes = theory_evaluation::Lanes;
  // Sample n of draw `draw` (sample_width_ numbers: θ, then per position λ, w, g; then ξ).
  void draw_sample(int64_t n, uint64_t draw, double* out) const;
  // Samples of batch b (kLanes of them), one per lane; aos is scratch for sample_width_
  // numbers per lane.
  void draw_batch(int64_t b, uint64_t draw, double* aos, Lanes* soa) const;
  // The samples of batch b: the stored ones (Fixed mode, when they fit), else drawn for `draw`
  // into soa (aos its scratch).
  const Lanes* batch_samples(int64_t b, uint64_t draw, double* aos, Lanes* soa) const;
  bool stored() const { return !stored_.empty() && options_.mode == MonteCarloMode::Fixed; }

  ModelSpec model_;
  TheoryOptions options_;
  StateLayout layout_;
  int sample_width_;
  int batch_width_;            // numbers per sample that evaluate() reads (λ, w; g and ξ if sampled)
  std::vector<Lanes> stored_;  // Fixed mode: the samples as draw_batch lays them out (when they fit)
};

}  // namespace headspec::expectation
