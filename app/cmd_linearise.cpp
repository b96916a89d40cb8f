// `headspec linearise`: the theory's ODE (docs/model.md §6–7) linearised at the unspecialised
// fixed point; its unstable eigenvalue predicts the specialisation time (docs/results.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <numbers>

#include "commands.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/linearisation.hpp"
#include "headspec/settings.hpp"
#include "headspec/study_checks.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct LineariseCliOptions {
  ModelOptions model;
  LinearisationSpec spec;
  int64_t seed = 1;
  int direction = 0;  // 1-based; 0: the first symmetric direction
  int mc_seeds = 1;
  bool growth = false;
  double growth_epsilon = 1e-4;
  double growth_T = 100;
  double record_every = 1;
  double along = 0;
  double along_every = 5;
  double predict_delta = 0;
  std::vector<double> predict_s0 = {1e-4, 1e-3};
  std::string out;
};

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
    const double t0 = r.residual < 1e-10 ? T + std::log(s0) / lambda : NAN;
    if (!std::isfinite(tau0)) tau0 = t0;
    p["runs"].push_back({{"s0", s0}, {"threshold_time", std::isfinite(T) ? nlohmann::json(T) : nlohmann::json()},
                         {"tau0", std::isfinite(t0) ? nlohmann::json(t0) : nlohmann::json()}});
  }
  p["tau0"] = std::isfinite(tau0) ? nlohmann::json(tau0) : nlohmann::json();
  if (r.residual >= 1e-10) p["note"] = "no converged fixed point (residual >= 1e-10): tau0 not computed";
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

int run_linearise(const LineariseCliOptions& o, const std::vector<std::string>& argv, bool check_only) {
  const ModelSpec model = make_model(o.model);
  LinearisationSpec spec = o.spec;
  spec.seed = checked_seed(o.seed);
  spec.direction = linearisation_direction(o.direction, model);
  spec.validate(model);
  check_runs(spec.seed, o.mc_seeds);
  if (o.growth && !(std::isfinite(o.growth_epsilon) && o.growth_epsilon > 0 && o.growth_epsilon < 0.1))
    throw UsageError(fmt::format("--growth-epsilon: must be in (0, 0.1), got {}", o.growth_epsilon));
  if (o.growth && !(std::isfinite(o.growth_T) && o.growth_T >= 4 * o.record_every))
    throw UsageError(fmt::format("--growth-T: must be at least 4 record intervals, got {}", o.growth_T));
  if (o.growth) {
    const double k = std::round(o.record_every / spec.dt);
    if (k < 1 || std::abs(k * spec.dt - o.record_every) > 1e-9 * o.record_every)
      throw UsageError(fmt::format("--record-every: {} is not a whole number of steps --dt {}", o.record_every, spec.dt));
  }
  if (o.along < 0 || !std::isfinite(o.along)) throw UsageError(fmt::format("--along: must be > 0, got {}", o.along));
  if (o.along > 0) {
    if (model.H != 2) throw UsageError("--along: the one-dimensional spread sector needs --H 2");
    const double k = std::round(o.along_every / spec.dt);
    if (k < 1 || std::abs(k * spec.dt - o.along_every) > 1e-9 * o.along_every || o.along < o.along_every)
      throw UsageError(fmt::format("--along-every: {} must be a whole number of steps --dt {} and at most --along",
                                   o.along_every, spec.dt));
  }
  if (o.predict_delta < 0 || !std::isfinite(o.predict_delta))
    throw UsageError(fmt::format("--predict-delta: must be > 0, got {}", o.predict_delta));
  for (double s0 : o.predict_s0)
    if (o.predict_delta > 0 && !(std::isfinite(s0) && s0 > 0 && s0 < o.predict_delta))
      throw UsageError(fmt::format("--predict-s0: must be in (0, --predict-delta), got {}", s0));
  if (!o.out.empty()) check_output_path(o.out, "--out");
  if (check_only) return 0;

  nlohmann::json out = provenance();
  out["command"] = "linearise";
  out["argv"] = argv;
  nlohmann::json jm;
  model.to_json(jm);
  out["model"] = jm;
  out["settings"] = {{"mc", spec.mc},         {"mc_mode", "fixed, averaged over the symmetry group"},
                     {"seed", spec.seed},     {"mc_seeds", o.mc_seeds},
                     {"dt", spec.dt},         {"T_max", spec.T_max},
                     {"settle", spec.settle}, {"fd_step", spec.fd_step},
                     {"integrator", "rk4"},   {"value_channel", "integrated"}};
  std::vector<double> rates;
  for (int k = 0; k < o.mc_seeds; ++k) {
    LinearisationSpec s = spec;
    s.seed = spec.seed + static_cast<uint32_t>(k);
    const LinearisationResult r = linearise(model, s);
    nlohmann::json j = result_json(r);
    j["seed"] = s.seed;
    if (o.growth) {
      const GrowthCheck g = growth_check(model, s, r, o.growth_epsilon, o.growth_T, o.record_every);
      j["growth"] = {{"epsilon", g.epsilon},        {"T", o.growth_T},
                     {"fitted_rate", g.fitted_rate}, {"first_quarter_rate", g.first_rate},
                     {"last_quarter_rate", g.last_rate}, {"t", g.t},
                     {"spread", g.spread}};
    }
    if (o.along > 0) {
      const SpreadGrowth a = spread_growth_along(model, s, r.direction, o.along, o.along_every);
      nlohmann::json ja = {{"t", a.t}, {"rate", a.rate}, {"log_growth", a.log_growth}};
      for (const auto& op : a.state) {
        ja["M_1_1"].push_back(op.M(0, 0));
        ja["Q_1_1"].push_back(op.Q(0, 0));
        ja["Q_1_2"].push_back(op.Q(0, 1));
        ja["c_1"].push_back(op.c[0]);
      }
      j["along"] = ja;
    }
    if (o.predict_delta > 0) j["prediction"] = tau_prediction(model, s, r, o.predict_delta, o.predict_s0);
    rates.push_back(r.spread_rate);
    if (k == 0) {
      for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it.value();
    } else {
      out["other_seeds"].push_back(j);
    }
  }
  double mean = 0, var = 0;
  for (double r : rates) mean += r / rates.size();
  for (double r : rates) var += (r - mean) * (r - mean);
  nlohmann::json summary = {{"lambda_plus", rates}, {"mean", mean}};
  if (rates.size() > 1) {
    summary["sd"] = std::sqrt(var / (rates.size() - 1));
    summary["stderr"] = std::sqrt(var / (rates.size() - 1) / rates.size());
  }
  out["lambda_plus_over_seeds"] = summary;
  const std::string text = out.dump(2) + "\n";
  if (o.out.empty())
    std::cout << text << std::flush;
  else
    write_file_atomic(o.out, text);
  if (!out["fixed_point"]["settled"].get<bool>())
    std::cerr << fmt::format("headspec: the approach did not settle (every |rate| < {}) by --T-max {}; linearised "
                             "at the last state after Newton's method (residual {:.3g})\n",
                             spec.settle, spec.T_max, out["fixed_point"]["residual"].get<double>());
  return 0;
}

}  // namespace

Command add_linearise_command(CLI::App& app) {
  auto o = std::make_shared<LineariseCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "linearise", "the theory's ODE linearised at the unspecialised fixed point: its unstable eigenvalue (JSON)");
  add_model_options(sub, o->model);
  sub->add_option("--mc", o->spec.mc, "Monte Carlo samples N (fixed samples, averaged over the symmetry group)")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "Monte Carlo seed")->capture_default_str();
  sub->add_option("--mc-seeds", o->mc_seeds, "repeat with seeds seed … seed+K−1 (spread of λ⁺ over Monte Carlo sets)")
      ->capture_default_str();
  sub->add_option("--dt", o->spec.dt, "RK4 step of the approach and of the growth check")->capture_default_str();
  sub->add_option("--T-max", o->spec.T_max, "longest approach to the fixed point")->capture_default_str();
  sub->add_option("--settle", o->spec.settle, "the approach stops once every |rate| is below this")
      ->capture_default_str();
  sub->add_option("--newton-iterations", o->spec.newton_iterations, "at most this many Newton steps after the approach")
      ->capture_default_str();
  sub->add_option("--fd-step", o->spec.fd_step, "central finite-difference step of the Jacobian")
      ->capture_default_str();
  sub->add_option("--direction", o->direction, "flipping direction f of the spread mode (default: the first, 2 for flip)");
  sub->add_flag("--growth", o->growth, "also integrate from the fixed point plus a small spread and fit its growth rate");
  sub->add_option("--growth-epsilon", o->growth_epsilon, "initial spread of M_{:,f}")->capture_default_str();
  sub->add_option("--growth-T", o->growth_T, "length of the growth check")->capture_default_str();
  sub->add_option("--record-every", o->record_every, "record interval of the growth check")->capture_default_str();
  sub->add_option("--approach-mc", o->spec.approach_mc,
                  "Monte Carlo samples of the approach to the fixed point (0: --mc); Newton's method uses --mc")
      ->capture_default_str();
  sub->add_option("--along", o->along,
                  "also the growth rate a(t) of the spread along the unspecialised trajectory, up to this t (H = 2)");
  sub->add_option("--along-every", o->along_every, "record interval of --along")->capture_default_str();
  sub->add_option("--predict-delta", o->predict_delta,
                  "also predict τ^s for threshold δ: integrate from M = 0 plus a spread --predict-s0 until it exceeds δ");
  sub->add_option("--predict-s0", o->predict_s0, "initial spreads of the prediction runs (the first gives τ_0)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--out", o->out, "JSON output file (stdout if absent)");
  return {sub, [o](const std::vector<std::string>& argv, bool check_only) { return run_linearise(*o, argv, check_only); }};
}

}  // namespace headspec::app
