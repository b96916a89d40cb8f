// The theory's configuration (include/headspec/theory_config.hpp).
#include "headspec/theory_config.hpp"

#include <fmt/format.h>

#include <cmath>

#include "headspec/command_settings.hpp"
#include "headspec/errors.hpp"
#include "headspec/parameters.hpp"
#include "headspec/theory_reference.hpp"

namespace headspec {

std::optional<uint32_t> checked_seed(const char* flag, int64_t seed, const char* absent) {
  if (seed == -1) return std::nullopt;
  if (seed < 0 || seed > 0xFFFFFFFFLL)
    throw ParameterError(flag, fmt::format("must be in [0, 2^32){}, got {}",
                                           *absent ? fmt::format(" (or -1: {})", absent) : "", seed));
  return static_cast<uint32_t>(seed);
}

namespace {

MonteCarloMode monte_carlo_mode(bool resample) { return resample ? MonteCarloMode::Resample : MonteCarloMode::Fixed; }

// --mc-method for the stochastic theory (docs/model.md §12): auto is sobol there, whose many
// runs would each take laplace's ≈ 8 ms per evaluation against ≈ 0.1 ms for sobol at
// N = 2048 (docs/theory.md §2); a method named stays itself.
SamplingMethod stochastic_theory_method(SamplingMethod method) {
  return method == SamplingMethod::Auto ? SamplingMethod::Sobol : method;
}

// The Monte Carlo seed of every run: --mc-seed if given; else, for the stochastic theory,
// `seed` for all runs (its runs are realisations of one process, whose drift and Σ must be one
// function of the state, docs/model.md §12: samples per run would add their Monte Carlo
// error as a spread over runs that SGD does not have); else none (run k uses seed + k).
std::optional<uint32_t> runs_samples_seed(std::optional<uint32_t> mc_seed, bool stochastic, uint32_t seed) {
  if (mc_seed || !stochastic) return mc_seed;
  return seed;
}

// The integration the flags ask for: the integrator named or its default (rk4; euler with
// --mc-resample), step, horizon, records, stop rules, and with finite_D > 0 the stochastic
// theory at that D (docs/model.md §12), checked for the Monte Carlo mode.
IntegrationSpec integration_of(const TheoryFlags& o, const TheoryHorizon& h, double finite_D) {
  IntegrationSpec integration;
  integration.method = parse_integrator(o.integrator.empty() ? (o.mc_resample ? "euler" : "rk4") : o.integrator);
  integration.dt = o.dt;
  integration.T = h.T;
  integration.record_every = h.record_every;
  integration.until_converged = o.until_converged;
  integration.until_error_settled = o.until_error_settled;
  integration.error_window = o.error_window;
  if (!(std::isfinite(h.delta) && h.delta > 0)) throw ParameterError("delta", fmt::format("must be > 0, got {}", h.delta));
  integration.stop_when_specialised = h.stop_when_specialised ? h.delta : 0;
  integration.finite_D = finite_D;
  integration.diffusion_samples = o.sde_mc;
  integration.reference_samples = o.sde_reference_mc;
  if (o.flow && finite_D > 0)
    throw ParameterError(
        "flow", "not with the stochastic theory: gradient flow is the limit η → 0, where the SGD noise vanishes");
  integration.validate(monte_carlo_mode(o.mc_resample));
  return integration;
}

// The expectation method's options; the stochastic theory's auto is sobol (stochastic_theory_method).
TheoryOptions expectations_of(const TheoryFlags& o, bool stochastic) {
  TheoryOptions mc;
  mc.samples = o.mc;
  mc.mode = monte_carlo_mode(o.mc_resample);
  mc.method = parse_sampling_method(o.mc_method);
  if (stochastic) mc.method = stochastic_theory_method(mc.method);
  mc.channel = o.keep_R ? ValueChannel::Sampled : ValueChannel::Integrated;
  mc.flow = o.flow;
  return mc;
}

}  // namespace

TheoryConfig::TheoryConfig(const TheoryFlags& flags, const TheoryHorizon& horizon, uint32_t seed, double finite_D)
    : flags_(flags) {
  check_sample_count("mc", flags.mc);
  const std::optional<uint32_t> mc_seed = checked_seed("mc-seed", flags.mc_seed, "--seed + k");
  integration_ = integration_of(flags, horizon, finite_D);
  expectations_ = expectations_of(flags, stochastic());
  check_reference_method(flags.sde_reference_mc, expectations_.method);
  samples_seed_ = runs_samples_seed(mc_seed, stochastic(), seed);
}

TheoryOptions TheoryConfig::expectations_for(const ModelSpec& model) const {
  TheoryOptions mc = expectations_;
  mc.method = resolved_method(model, mc);
  return mc;
}

int64_t TheoryConfig::samples_used(const ModelSpec& model) const {
  return TheoryEngine::samples_used(model, expectations_for(model));
}

void TheoryConfig::check_model(const ModelSpec& model) const {
  // Under gradient flow time is τ = ηt (docs/model.md §6), in which a schedule would change
  // only the clock, not the path.
  if (flags_.flow && !model.lr_schedule.constant())
    throw ParameterError("flow",
                         "not with --lr-schedule: under gradient flow time is τ = ∫η dt, and a schedule only "
                         "relabels it");
}

nlohmann::json TheoryConfig::identity() const {
  nlohmann::json t = sidecar_parameters(theory_flag_parameters(), flags_)["theory"];
  t["mc_mode"] = flags_.mc_resample ? "resample" : "fixed";
  t["value_channel"] = flags_.keep_R ? "sampled" : "integrated";
  t["integrator"] = to_string(integration_.method);
  t["dt"] = integration_.dt;
  t["dopri5_tolerance"] = integration_.tolerance;
  // Recorded only when set, so that sidecars and checkpoints without them stay as they were.
  if (flags_.flow) t["flow"] = true;
  if (flags_.sde_mc != 0) t["sde_mc"] = flags_.sde_mc;
  if (flags_.sde_reference_mc != 0) t["sde_reference_mc"] = flags_.sde_reference_mc;
  t["time"] = flags_.flow ? "tau = lr t: gradient flow, no lr^2 term (docs/model.md §6)"
                          : "t = samples seen / D, as for simulate";
  return t;
}

nlohmann::json TheoryConfig::identity_for(const ModelSpec& model) const {
  nlohmann::json t = identity();
  t["mc_samples_used"] = samples_used(model);
  if (flags_.mc_method == "auto") t["mc_method_used"] = to_string(expectations_for(model).method);
  return t;
}

double TheoryConfig::evaluation_work(const ModelSpec& model) const {
  if (expectations_for(model).method == SamplingMethod::Laplace) return kLaplaceEvaluationWork;
  return static_cast<double>(samples_used(model));
}

double TheoryConfig::stored_bytes(const ModelSpec& model) const {
  // Each engine keeps its fixed samples. The stochastic theory adds Σ's engine (plain, the
  // value channel sampled, of the drift's N) and its per-block sums of the n(n+3)/2 rates and
  // products (TheoryEngine::rate_covariance).
  double bytes = TheoryEngine::stored_bytes(model, expectations_);
  if (!stochastic()) return bytes;
  // laplace's drift has no samples: Σ then takes --mc of them (TheoryRuns).
  const double drift_samples = static_cast<double>(TheoryEngine::samples_used(model, expectations_));
  const double N = drift_samples > 0 ? drift_samples : static_cast<double>(flags_.mc);
  const double n = StateLayout(model.H, model.F(), model.readout == Readout::Learned).size();
  TheoryOptions sigma;
  sigma.samples = static_cast<int64_t>(N);
  sigma.channel = ValueChannel::Sampled;
  bytes += TheoryEngine::stored_bytes(model, sigma);
  bytes += std::ceil(N / TheoryEngine::kBlock) * n * (n + 3) / 2 * 8.0;
  return bytes;
}

}  // namespace headspec
