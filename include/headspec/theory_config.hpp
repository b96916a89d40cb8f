#pragma once
// The theory's configuration (docs/model.md §6, §12; docs/cli.md): its flags (TheoryFlags)
// checked and resolved once, for `theory`, `sweep --engine theory|sde`, their budgets and the
// Python module alike. It owns the checks of those flags, the options of the expectation
// method, the integration, the runs' Monte Carlo seed, the work and memory of an evaluation,
// and the run's identity in sidecars and checkpoints.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "headspec/model.hpp"
#include "headspec/theory_engine.hpp"
#include "headspec/theory_flags.hpp"
#include "headspec/theory_integrator.hpp"

namespace headspec {

/// A seed flag: absent (−1) or a seed in [0, 2^32); throws ParameterError naming `flag`.
/// `absent` says what −1 means ("--seed + k"), or is empty where −1 is only the default.
std::optional<uint32_t> checked_seed(const char* flag, int64_t seed, const char* absent);

/// The work of one laplace evaluation counted in plain samples of the same CPU time (≈ 6.7·10^5
/// in the Fig. 1 model, docs/theory.md §2, rounded up): the budgets' unit for a method without samples.
inline constexpr double kLaplaceEvaluationWork = 1e6;

/// What the runs' own flags add to the theory's: horizon, records, specialisation stop.
struct TheoryHorizon {
  double T = 20;
  double record_every = 1;
  double delta = 0.2;                  ///< specialisation threshold δ (docs/model.md §10)
  bool stop_when_specialised = false;
};

class TheoryConfig {
 public:
  /// Checks every flag; throws ParameterError naming the first bad one. `finite_D` > 0: the
  /// stochastic theory at that D (docs/model.md §12); `seed` is --seed.
  TheoryConfig(const TheoryFlags& flags, const TheoryHorizon& horizon, uint32_t seed, double finite_D = 0);

  const TheoryFlags& flags() const { return flags_; }
  bool stochastic() const { return integration_.finite_D > 0; }
  const IntegrationSpec& integration() const { return integration_; }
  /// The expectation method's options (samples, mode, method, value channel, flow); the method
  /// as given (--mc-method auto is resolved by each model's engine).
  const TheoryOptions& expectations() const { return expectations_; }
  /// expectations() with the method `model`'s evaluations take (auto resolved, docs/model.md §6).
  TheoryOptions expectations_for(const ModelSpec& model) const;
  /// The samples of one evaluation for `model` (--mc rounded up by the symmetric methods).
  int64_t samples_used(const ModelSpec& model) const;
  /// --mc-seed; for the stochastic theory --seed if absent (runs_samples_seed); absent: run k
  /// uses --seed + k.
  std::optional<uint32_t> samples_seed() const { return samples_seed_; }
  /// What the flags require of a model (--flow: no --lr-schedule); throws ParameterError.
  void check_model(const ModelSpec& model) const;

  /// The theory's object in sidecars and checkpoints, the same for `theory`, `sweep` and Python:
  /// the flags' sidecar fields and what they resolve to (mode, value channel, integrator,
  /// tolerance, the clock); the optional ones only when set, so that older checkpoints stay valid.
  nlohmann::json identity() const;
  /// identity() with what `model` resolves: the samples of an evaluation, and the method auto chose.
  nlohmann::json identity_for(const ModelSpec& model) const;

  /// The work of one evaluation counted in samples (laplace, which has none: the plain samples
  /// of the same CPU time), and the bytes a run keeps (fixed samples; the stochastic theory's Σ).
  double evaluation_work(const ModelSpec& model) const;
  double stored_bytes(const ModelSpec& model) const;

 private:
  TheoryFlags flags_;
  IntegrationSpec integration_;
  TheoryOptions expectations_;
  std::optional<uint32_t> samples_seed_;
};

}  // namespace headspec
