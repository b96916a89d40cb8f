// `headspec bayes`: the Bayes-optimal error (docs/model.md §8) as one JSON object.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "headspec/bayes.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct BayesOptions {
  ModelOptions model;
  int64_t samples = 1000000;
  int64_t seed = 1;
  std::string method = "mc";
};

int run_bayes(const BayesOptions& o, bool check_only) {
  const ModelSpec model = make_model(o.model);
  if (o.samples < 2) throw UsageError(fmt::format("--samples: need at least 2, got {}", o.samples));
  if (o.seed < 0 || o.seed > 0xFFFFFFFFLL) throw UsageError(fmt::format("--seed: must be in [0, 2^32), got {}", o.seed));
  if (o.method != "mc" && o.method != "quadrature")
    throw UsageError(fmt::format("--method: unknown method '{}' (mc, quadrature)", o.method));
  if (check_only) return 0;
  nlohmann::json out = provenance();
  out["command"] = "bayes";
  out["prior"] = model.prior.name();
  out["nu"] = std::vector<double>(model.prior.nu().data(), model.prior.nu().data() + model.F());
  out["L"] = model.L;
  out["noise"] = model.noise;
  out["method"] = o.method;
  if (o.method == "quadrature") {
    out["mmse"] = bayes_error_quadrature(model.prior, model.L, model.noise);
    out["stderr"] = 0.0;
  } else {
    const auto e = bayes_error_mc(model.prior, model.L, model.noise, o.samples, static_cast<uint32_t>(o.seed));
    out["mmse"] = e.mean;
    out["stderr"] = e.stderr_;
    out["samples"] = o.samples;
    out["seed"] = o.seed;
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

Command add_bayes_command(CLI::App& app) {
  auto opts = std::make_shared<BayesOptions>();
  CLI::App* sub = app.add_subcommand("bayes", "the Bayes-optimal error ε_Bayes = 1 − E[Σ_ℓ P_ℓ²] + Δ (prints JSON)");
  add_model_options(sub, opts->model);
  sub->add_option("--samples", opts->samples, "Monte Carlo samples")->capture_default_str();
  sub->add_option("--seed", opts->seed, "random seed")->capture_default_str();
  sub->add_option("--method", opts->method, "mc | quadrature (F = 1 only)")->capture_default_str();
  return {sub, [opts](const std::vector<std::string>&, bool check_only) { return run_bayes(*opts, check_only); }};
}

}  // namespace headspec::app
