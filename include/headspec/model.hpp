#pragma once
// The model's parameters, shared by every engine (docs/model.md §1–4).
#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include "headspec/activation.hpp"
#include "headspec/lr_schedule.hpp"
#include "headspec/prior.hpp"

namespace headspec {

/// The model's plain numbers, the same as written and as used: declared here once, with
/// their flags, help and checks in model_number_parameters() (src/parameters.cpp), which
/// also writes them into the sidecar. ModelSettings and ModelSpec both hold them.
struct ModelNumbers {
  int L = 10;          ///< sequence length
  int H = 2;           ///< heads
  double lr = 1.0;     ///< η
  int batch = 1;       ///< B
  double noise = 0.0;  ///< label noise Δ
  double q0 = 1.0;     ///< initial key variance
};

/// The model resolved from its settings (ModelSettings::to_spec): the numbers as given and
/// the named choices as types.
struct ModelSpec : ModelNumbers {
  Prior prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  Activation activation = Activation::Softmax;
  Readout readout = Readout::Learned;
  double readout_lr = 1.0;  ///< η_c (learned readout)
  LrSchedule lr_schedule;   ///< g(t): η(t) = η g(t), η_c(t) = η_c g(t) (docs/model.md §4)

  int F() const { return prior.F(); }
  /// c(0): 1/H for learned and mean, 1 for sum (docs/model.md §3).
  Eigen::VectorXd initial_readout() const;
  /// The time t = nB/D before SGD step n of B samples at dimension D (docs/model.md §4).
  double time_of_step(int64_t n, int64_t D) const { return static_cast<double>(n) * batch / static_cast<double>(D); }
  /// The schedule's factor g before SGD step n, at time_of_step(n, D).
  double step_factor(uint64_t n, int64_t D) const {
    return lr_schedule.constant() ? 1.0 : lr_schedule.factor(time_of_step(static_cast<int64_t>(n), D));
  }
  /// Throws ParameterError naming the parameter of the first inconsistent value.
  void validate() const;
  /// Every parameter, for JSON sidecars.
  void to_json(nlohmann::json& j) const;
};

}  // namespace headspec
