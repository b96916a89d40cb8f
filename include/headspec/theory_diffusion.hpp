#pragma once
// The finite-D fluctuations of the order parameters (docs/model.md §12): over a time dt,
// online SGD at dimension D moves the state x = (M, R, Q, c) by the ODE's drift F(x) dt plus
// a Gaussian increment of covariance Σ(x) dt / D, where Σ is the covariance over the samples
// of one sample's rates. This class gives Σ and the increments; the stepper that adds them to
// the ODE's steps is ode::StochasticStepper (include/headspec/theory_ode.hpp).
#include <Eigen/Dense>
#include <cstdint>

#include "headspec/model.hpp"
#include "headspec/random.hpp"
#include "headspec/theory_engine.hpp"

namespace headspec {

class TheoryDiffusion {
 public:
  /// Σ from `samples` fixed plain samples of Monte Carlo seed `seed` with the value channel
  /// sampled; `drift_channel` is the drift's: with ValueChannel::Integrated (R ≡ 0, docs/model.md
  /// §7) the rows and columns of R are zero, so R stays 0. D: the dimension of the SGD the
  /// increments stand for (> 0).
  TheoryDiffusion(const ModelSpec& model, int64_t samples, uint32_t seed, ValueChannel drift_channel, double D);

  double D() const { return D_; }
  const StateLayout& layout() const { return engine_.layout(); }

  /// Σ at the packed state x (StateLayout order, per unit t, PSD up to its Monte Carlo error).
  /// t: the time, for the schedule's factor (docs/model.md §4).
  Eigen::MatrixXd covariance(const double* x, double t = 0) const;

  /// out = √(dt/D) Σ(x)^{1/2} ξ with the symmetric PSD root (eigenvalues below 0, Monte Carlo
  /// error only, taken as 0) and ξ the layout().size() standard normals of stream `noise`.
  void increment(const double* x, double t, double dt, const StreamId& noise, double* out) const;

 private:
  TheoryEngine engine_;
  ValueChannel drift_channel_;
  double D_;
};

}  // namespace headspec
