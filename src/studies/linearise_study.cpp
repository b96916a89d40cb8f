// `headspec linearise` without its command line (docs/model.md §6–7; docs/cli.md).
#include "headspec/linearise_study.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "headspec/errors.hpp"
#include "headspec/study_checks.hpp"

namespace headspec {
namespace {

// A fixed point counts as converged below this residual (max |rate| over the free coordinates):
// τ_0 and the mean of λ⁺ over seeds use converged fixed points only.
constexpr double kConvergedResidual = 1e-10;

// τ^s from λ⁺ (docs/results.md, "Linearisation"): the spread starts at s(0) = |z| √(q0/D) with
// z ~ N(0, 1) (H = 2: M_h2(0) ~ N(0, q0/D), docs/model.md §4) and grows as e^{λ⁺ t}, so
// τ^s = τ_0 − ln s(0)/λ⁺ = τ_0 − ln q0/(2λ⁺) + ln D/(2λ⁺) − ln|z|/λ⁺, where τ_0 is read off the
// ODE started with a small spread s0: τ_0 = T(s0) + ln(s0)/λ⁺. E ln|z| = −(γ + ln 2)/2,
// median ln|z| = ln 0.67449, Var ln|z| = π²/8.
nlohmann::json tau_prediction(const ModelSpec& model, const LinearisationSpec& spec, const LinearisationResult& r,
                              double delta, const std::vector<double>& s0s) {
  const double lambda = r.spread_rate;
  nlohmann::json p = {{"delta", delta}};
  double tau0 = NAN;
  for (double s0 : s0s) {
    const double T = threshold_time(model, spec, r.direction, s0, delta);
    // τ_0 needs λ⁺ of a converged fixed point; without one only the threshold times are kept.
    const double t0 = r.residual < kConvergedResidual ? T + std::log(s0) / lambda : NAN;
    if (!std::isfinite(tau0)) tau0 = t0;
    p["runs"].push_back({{"s0", s0}, {"threshold_time", std::isfinite(T) ? nlohmann::json(T) : nlohmann::json()},
                         {"tau0", std::isfinite(t0) ? nlohmann::json(t0) : nlohmann::json()}});
  }
  p["tau0"] = std::isfinite(tau0) ? nlohmann::json(tau0) : nlohmann::json();
  if (r.residual >= kConvergedResidual) p["note"] = "no converged fixed point (residual >= 1e-10): tau0 not computed";
  p["slope_per_ln_D"] = 1 / (2 * lambda);
  if (model.H == 2 && std::isfinite(tau0)) {
    const double euler_gamma = 0.57721566490153286;
    const double base = tau0 - std::log(model.q0) / (2 * lambda);
    p["mean_tau_intercept"] = base + (euler_gamma + std::log(2.0)) / (2 * lambda);
    p["median_tau_intercept"] = base - std::log(0.67448975019608171) / lambda;
    p["var_tau"] = std::numbers::pi * std::numbers::pi / (8 * lambda * lambda);
    p["formula"] = "E tau = mean_tau_intercept + ln(D)/(2 lambda+); median likewise; Var tau = pi^2/(8 lambda+^2)";
  }
  return p;
}

nlohmann::json op_json(const OrderParameters& op) {
  nlohmann::json j;
  for (int h = 0; h < op.H(); ++h) {
    for (int f = 0; f < op.F(); ++f) j[fmt::format("M_{}_{}", h + 1, f + 1)] = op.M(h, f);
    for (int g = h; g < op.H(); ++g) j[fmt::format("Q_{}_{}", h + 1, g + 1)] = op.Q(h, g);
    j[fmt::format("c_{}", h + 1)] = op.c[h];
  }
  return j;
}

nlohmann::json result_json(const LinearisationResult& r) {
  nlohmann::json j;
  j["group_size"] = r.group_size;
  j["direction"] = r.direction + 1;
  nlohmann::json fp = op_json(r.fixed_point);
  fp["settled"] = r.settled;
  fp["settled_at"] = r.settled_at;
  fp["newton_iterations"] = r.newton_iterations;
  fp["residual"] = r.residual;
  fp["loss"] = r.loss;
  j["fixed_point"] = fp;
  for (const auto& p : r.approach) {
    nlohmann::json a = op_json(p.op);
    a["t"] = p.t;
    a["loss"] = p.loss;
    a["max_rate"] = p.max_rate;
    j["approach"].push_back(a);
  }
  j["coordinates"] = r.coordinates;
  for (Eigen::Index i = 0; i < r.jacobian.rows(); ++i) {
    std::vector<double> row(r.jacobian.cols());
    for (Eigen::Index k = 0; k < r.jacobian.cols(); ++k) row[k] = r.jacobian(i, k);
    j["jacobian"].push_back(row);
  }
  for (Eigen::Index k = 0; k < r.eigenvalues.size(); ++k)
    j["eigenvalues"].push_back({{"re", r.eigenvalues[k].real()}, {"im", r.eigenvalues[k].imag()}});
  nlohmann::json lead = {{"re", r.eigenvalues[0].real()}, {"im", r.eigenvalues[0].imag()}};
  for (std::size_t i = 0; i < r.coordinates.size(); ++i)
    lead["eigenvector"][r.coordinates[i]] = {{"re", r.eigenvectors(i, 0).real()}, {"im", r.eigenvectors(i, 0).imag()}};
  j["leading"] = lead;
  nlohmann::json spread = {{"lambda_plus", r.spread_rate},
                           {"lambda_plus_half_fd_step", r.spread_rate_half_step},
                           {"odd_even_coupling", r.odd_even_coupling},
                           {"raw_engine_spread_bias", r.raw_spread_bias}};
  for (std::size_t i = 0; i < r.coordinates.size(); ++i) spread["eigenvector"][r.coordinates[i]] = r.spread_mode[i];
  j["spread_mode"] = spread;
  return j;
}

// Whether `every` is a whole number of steps dt.
bool whole_steps(double every, double dt) {
  const double k = std::round(every / dt);
  return k >= 1 && std::abs(k * dt - every) <= 1e-9 * every;
}

void check_growth(const LineariseSettings& o, const LinearisationSpec& spec) {
  if (!o.growth) return;
  if (!(std::isfinite(o.growth_epsilon) && o.growth_epsilon > 0 && o.growth_epsilon < 0.1))
    throw ParameterError("growth-epsilon", fmt::format("must be in (0, 0.1), got {}", o.growth_epsilon));
  if (!(std::isfinite(o.growth_T) && o.growth_T >= 4 * o.record_every))
    throw ParameterError("growth-T", fmt::format("must be at least 4 record intervals, got {}", o.growth_T));
  if (!whole_steps(o.record_every, spec.dt))
    throw ParameterError("record-every",
                         fmt::format("{} is not a whole number of steps --dt {}", o.record_every, spec.dt));
}

void check_along(const LineariseSettings& o, const ModelSpec& model, const LinearisationSpec& spec) {
  if (o.along < 0 || !std::isfinite(o.along)) throw ParameterError("along", fmt::format("must be > 0, got {}", o.along));
  if (o.along <= 0) return;
  if (model.H != 2) throw ParameterError("along", "the one-dimensional spread sector needs --H 2");
  if (!whole_steps(o.along_every, spec.dt) || o.along < o.along_every)
    throw ParameterError("along-every", fmt::format("{} must be a whole number of steps --dt {} and at most --along",
                                                    o.along_every, spec.dt));
}

void check_prediction(const LineariseSettings& o) {
  if (o.predict_delta < 0 || !std::isfinite(o.predict_delta))
    throw ParameterError("predict-delta", fmt::format("must be > 0, got {}", o.predict_delta));
  for (double s0 : o.predict_s0)
    if (o.predict_delta > 0 && !(std::isfinite(s0) && s0 > 0 && s0 < o.predict_delta))
      throw ParameterError("predict-s0", fmt::format("must be in (0, --predict-delta), got {}", s0));
}

// The result of one seed, with the growth check, the rate along the trajectory and the
// prediction when asked for.
nlohmann::json seed_json(const LineariseSettings& o, const ModelSpec& model, const LinearisationSpec& s,
                         const LinearisationResult& r) {
  nlohmann::json j = result_json(r);
  j["seed"] = s.seed;
  if (o.growth) {
    const GrowthCheck g = growth_check(model, s, r, o.growth_epsilon, o.growth_T, o.record_every);
    j["growth"] = {{"epsilon", g.epsilon},         {"T", o.growth_T},
                   {"fitted_rate", g.fitted_rate}, {"first_quarter_rate", g.first_rate},
                   {"last_quarter_rate", g.last_rate}, {"t", g.t},
                   {"spread", g.spread}};
  }
  if (o.along > 0) {
    const SpreadGrowth a = spread_growth_along(model, s, r.direction, o.along, o.along_every);
    nlohmann::json ja = {
        {"t", a.t}, {"rate", a.rate}, {"log_growth", a.log_growth}, {"split_diffusion", a.split_diffusion}};
    for (const auto& op : a.state) {
      ja["M_1_1"].push_back(op.M(0, 0));
      ja["Q_1_1"].push_back(op.Q(0, 0));
      ja["Q_1_2"].push_back(op.Q(0, 1));
      ja["c_1"].push_back(op.c[0]);
    }
    j["along"] = ja;
  }
  if (o.predict_delta > 0) j["prediction"] = tau_prediction(model, s, r, o.predict_delta, o.predict_s0);
  return j;
}

// Mean, sd and standard error over the seeds of each entry of equally long series (one per seed).
nlohmann::json over_seeds(const std::vector<std::vector<double>>& series) {
  const std::size_t k = series.size(), n = series.front().size();
  std::vector<double> mean(n, 0.0), sd(n, 0.0), standard_error(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double var = 0;
    for (const auto& s : series) mean[i] += s[i] / k;
    for (const auto& s : series) var += (s[i] - mean[i]) * (s[i] - mean[i]);
    sd[i] = std::sqrt(var / (k - 1));
    standard_error[i] = std::sqrt(var / (k - 1) / k);
  }
  return {{"mean", mean}, {"sd", sd}, {"stderr", standard_error}};
}

// λ⁺ over the seeds: the values, their residuals, and the mean (with several seeds also sd and
// stderr) over the seeds whose Newton iteration converged — a fixed point that did not converge
// (e.g. Newton started from an unsettled plateau) has a λ⁺ of some other state. With no
// converged seed the summary is over all of them and says so.
nlohmann::json rates_summary(const std::vector<LinearisationResult>& results) {
  std::vector<double> rates, residuals, used;
  for (const auto& r : results) {
    rates.push_back(r.spread_rate);
    residuals.push_back(r.residual);
    if (r.residual < kConvergedResidual) used.push_back(r.spread_rate);
  }
  nlohmann::json summary = {{"lambda_plus", rates}, {"residual", residuals}};
  if (used.empty()) {
    used = rates;
    summary["note"] = "no seed converged (residual >= 1e-10): over all seeds";
  } else if (used.size() < rates.size()) {
    summary["note"] = fmt::format("{} of {} seeds left out: residual >= 1e-10", rates.size() - used.size(), rates.size());
  }
  summary["seeds_used"] = used.size();
  if (used.size() == 1) {
    summary["mean"] = used.front();
    return summary;
  }
  std::vector<std::vector<double>> series;
  for (double r : used) series.push_back({r});
  const nlohmann::json spread = over_seeds(series);
  for (const char* key : {"mean", "sd", "stderr"}) summary[key] = spread[key].front();
  return summary;
}

// a(t) and ℓ(t) of --along over the seeds (with several seeds): their mean, sd and stderr at
// every recorded t — the Monte Carlo error bars of the growth rate (docs/results.md).
nlohmann::json along_summary(const nlohmann::json& seeds) {
  std::vector<std::vector<double>> rate, log_growth;
  for (const nlohmann::json& j : seeds) {
    rate.push_back(j["along"]["rate"].get<std::vector<double>>());
    log_growth.push_back(j["along"]["log_growth"].get<std::vector<double>>());
  }
  return {{"t", seeds.front()["along"]["t"]}, {"rate", over_seeds(rate)}, {"log_growth", over_seeds(log_growth)}};
}

}  // namespace

LineariseStudy prepare_linearise(const LineariseSettings& o) {
  LineariseStudy study;
  study.model = o.to_spec();
  if (!study.model.lr_schedule.constant())
    throw ParameterError("lr-schedule", "linearise studies the fixed point of the theory at a constant step size");
  LinearisationSpec& spec = study.spec;
  spec.mc = o.mc;
  spec.dt = o.dt;
  spec.T_max = o.T_max;
  spec.approach_mc = o.approach_mc;
  spec.settle = o.settle;
  spec.newton_iterations = o.newton_iterations;
  spec.fd_step = o.fd_step;
  spec.seed = checked_seed(o.seed);
  spec.method = parse_sampling_method(o.mc_method);
  spec.direction = linearisation_direction(o.direction, study.model);
  spec.validate(study.model);
  check_runs(spec.seed, o.mc_seeds, "mc-seeds");
  check_growth(o, spec);
  check_along(o, study.model, spec);
  check_prediction(o);
  return study;
}

LineariseOutcome run_linearise_study(const LineariseSettings& o, const LineariseStudy& study) {
  LineariseOutcome outcome;
  nlohmann::json& out = outcome.document;
  study.model.to_json(out["model"]);
  out["settings"] = sidecar_parameters(linearise_parameters(), o)["settings"];
  out["settings"].update({{"mc_mode", "fixed, averaged over the symmetry group"},
                          {"integrator", "rk4"},
                          {"value_channel", "integrated"}});
  if (o.mc_method == "auto")
    out["settings"]["mc_method_used"] = to_string(resolved_method(study.model, study.spec.theory_options()));
  nlohmann::json seeds = nlohmann::json::array();
  for (int k = 0; k < o.mc_seeds; ++k) {
    LinearisationSpec s = study.spec;
    s.seed = study.spec.seed + static_cast<uint32_t>(k);
    outcome.results.push_back(linearise(study.model, s));
    seeds.push_back(seed_json(o, study.model, s, outcome.results.back()));
    if (k == 0)
      out.update(seeds.back());
    else
      out["other_seeds"].push_back(seeds.back());
  }
  out["lambda_plus_over_seeds"] = rates_summary(outcome.results);
  if (o.along > 0 && o.mc_seeds > 1) out["along_over_seeds"] = along_summary(seeds);
  return outcome;
}

}  // namespace headspec
