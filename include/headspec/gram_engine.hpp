#pragma once
// The exact reduced engine (docs/model.md §9; docs/gram-engine.md): online SGD at token
// dimension D as a Markov chain on the keys' coordinates in an orthonormal frame of
// r = F + 1 + H vectors. Same law as DenseEngine at the same D; cost independent of D.
#include <memory>
#include <optional>

#include "headspec/kernel.hpp"
#include "headspec/model.hpp"
#include "headspec/simulation.hpp"
#include "headspec/wishart.hpp"

namespace headspec {

class GramEngine final : public SgdEngine {
 public:
  /// Largest D accepted: D and D − r must be exact integers in a double.
  static constexpr int64_t kMaxD = int64_t{1} << 52;

  /// Keys drawn with the law of DenseEngine's: the coordinates on u_f/√D and v*/√D are the
  /// very numbers the dense engine draws for coordinates 0..F (stream (seed, KeyInit, h)),
  /// so M(0) and R(0) coincide with the dense engine's for the same seed; the rest is the
  /// Bartlett factor of q0·Wishart_H(D − F − 1, I) (stream (seed, KeyInit, lane H)).
  GramEngine(const ModelSpec& model, int64_t D, uint32_t seed);

  void step(uint64_t n) override;
  OrderParameters order_parameters() const override;
  /// ε from fresh samples in the (H + F + 1)-dimensional projections (docs/model.md §5).
  MeanEstimate recorded_error(const OrderParameters& op, int test_samples) const override;
  bool diverged() const override { return diverged_; }
  /// Coordinates κ and readout: the rest is work space or fixed by (model, D, seed).
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  /// Key coordinates κ (H × r), k_h = √D Σ_i κ_hi b_i: columns 0..F−1 on u_f/√D, column F
  /// on v*/√D, columns F+1.. on the keys' own frame vectors, where κ is kept lower
  /// triangular with a non-negative diagonal (the Cholesky factor of Q⊥).
  const RowMatrix& coordinates() const { return kappa_; }
  /// Puts the chain in the state with order parameters (M, R, Q) and readout c. Every set
  /// of keys with these overlaps has the same future law (the noise is isotropic).
  void set_state(const OrderParameters& op);
  int64_t D() const { return D_; }
  int frame_size() const { return r_; }
  /// Whether steps run through the code specialised for this (L, H, F) (softmax or
  /// softmax-1, batch 1, L ≥ H, D − r ≥ H; gram_engine.cpp lists the sizes); the other
  /// cases, and every step after use_general_step(), run the general-size code. Both have
  /// the same arithmetic up to the order of a few sums.
  bool fixed_size_step() const { return step_impl_ != &GramEngine::step_general; }
  /// Runs every later step through the general-size code (tests compare the two paths).
  void use_general_step() { step_impl_ = &GramEngine::step_general; }

  static EngineFactory factory(const ModelSpec& model, int64_t D);

 private:
  void draw_initial_keys();
  void select_step();
  void step_general(uint64_t n);
  void accumulate_sample(uint64_t n, int b, double noise_sd);
  void move_out_of_frame(double eps);
  template <int L, int H, int F>
  void step_fixed(uint64_t n);

  ModelSpec model_;  // owned: an engine outlives the flags it was made from
  int64_t D_;
  int F_, H_, L_, r_;
  double outside_dof_;  // D − r: dimension of the complement of the frame
  uint32_t seed_;
  RowMatrix kappa_;     // H × r
  Eigen::VectorXd c_, c_grad_;
  AttentionKernel kernel_;
  std::optional<BartlettSampler> outside_;  // the step's out-of-frame factor, when D − r ≥ 1
  // Work space of one step, sized once: a step allocates nothing.
  RowMatrix omega_, S_, J_, dK_, T_, C_;
  Eigen::MatrixXd all_G_, At_;  // Ĝᵀ (B·L × H) and Aᵀ ((H + m) × H), factorised in place
  Eigen::VectorXd g_, theta_;
  bool diverged_ = false;
  void (GramEngine::*step_impl_)(uint64_t) = &GramEngine::step_general;
};

}  // namespace headspec
