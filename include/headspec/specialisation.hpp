#pragma once
// Specialisation of heads (docs/model.md §10): direction f is specialised at the first time
// τ_f^s when the heads' magnetisations along f spread out,
//   ‖M_{:,f} − (1/H) Σ_h M_hf 1_H‖₂ > δ,
// with δ = 0.2 for the synthetic figures and 1 for MNIST.
#include <Eigen/Dense>
#include <span>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec {

/// Throws ParameterError("delta") unless δ is finite and > 0; with `zero_is_off` also 0
/// (a stop rule's δ, where 0 means no rule).
void check_delta(double delta, bool zero_is_off = false);

/// ‖M_{:,f} − mean_h M_hf‖₂: how far the heads' overlaps with direction f spread.
double head_spread(const Eigen::MatrixXd& M, int f);

/// τ_f^s for every direction f of a recorded trajectory (records in increasing t): the
/// first recorded t whose spread exceeds delta, NaN if it never does. The time resolution
/// is the recording interval.
std::vector<double> specialisation_times(std::span<const Record> records, double delta);

/// The directions the specialisation stop rule (--stop-when-specialised, threshold delta > 0)
/// watches: those whose prior mean is zero (along the others every head aligns), less those
/// that `records` already show specialised (a resumed run replays its records through the
/// rule). Empty when delta ≤ 0 (no rule).
std::vector<int> watched_directions(const ModelSpec& model, double delta, std::span<const Record> records);

/// The rule at the newest record M: drops the watched directions that have split; true once
/// none is left (every direction of prior mean zero has specialised).
bool all_specialised(std::vector<int>& watched, const Eigen::MatrixXd& M, double delta);

}  // namespace headspec
