#pragma once
// What the two engines with dense keys in R^D (DenseEngine, MnistEngine) share: the
// mini-batch SGD step and the checkpointed state. They differ only in how a sample is drawn.

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "headspec/checkpoint.hpp"
#include "headspec/model.hpp"

namespace headspec {

/// One step of B samples (docs/model.md §4): k_h ← k_h − (η/B) Σ_b r J_hℓ x_ℓ/√D and, for a learned
/// readout, c_h ← c_h − (η_c/(B D)) Σ_b r o_h (§3). add_sample(b, scale, target) draws sample b
/// of the step, does target_h −= scale Σ_ℓ G_hℓ x_ℓ (target is H × D) and adds r·o to c_grad.
/// With B = 1 it updates the keys in place; otherwise the B gradients are summed in
/// batch_grad (H × D) first, so every sample of the step sees the same keys.
/// `g` is the schedule's factor of the step (ModelSpec::step_factor).
template <class AddSample>
void dense_sgd_step(const ModelSpec& model, double g, int64_t D, std::vector<double>& keys,
                    std::vector<double>& batch_grad, Eigen::VectorXd& c, Eigen::VectorXd& c_grad,
                    AddSample&& add_sample) {
  const int B = model.batch;
  const double scale = (model.lr * g) / (B * std::sqrt(static_cast<double>(D)));
  c_grad.setZero();
  if (B == 1) {
    add_sample(0, scale, keys.data());
  } else {
    std::fill(batch_grad.begin(), batch_grad.end(), 0.0);
    for (int b = 0; b < B; ++b) add_sample(b, -1.0, batch_grad.data());  // accumulates +Σ_ℓ G_hℓ x_ℓ
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] -= scale * batch_grad[i];
  }
  if (model.readout == Readout::Learned) c -= ((model.readout_lr * g) / (B * static_cast<double>(D))) * c_grad;
}

/// The state of a dense engine: keys, then readout (the rest is fixed by the engine's
/// arguments or is work space).
inline void save_keys_and_readout(StateWriter& out, const std::vector<double>& keys, const Eigen::VectorXd& c) {
  out.put_doubles(keys);
  out.put_doubles(c.data(), static_cast<std::size_t>(c.size()));
}

inline void load_keys_and_readout(StateReader& in, std::vector<double>& keys, Eigen::VectorXd& c) {
  in.doubles_into(keys.data(), keys.size());
  in.doubles_into(c.data(), static_cast<std::size_t>(c.size()));
}

}  // namespace headspec
