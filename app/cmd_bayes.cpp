// `headspec bayes`: the Bayes-optimal error (docs/model.md §8) as one JSON object.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/bayes.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

int run_bayes(const BayesSettings& o, bool check_only) {
  const ModelSpec model = o.to_spec();
  o.check();
  check_budget(bayes_budget(o, model), o);
  const ThreadLimit thread_limit(o.threads);  // --threads, for the rest of the command
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
  write_stdout(out.dump() + "\n");
  return 0;
}

}  // namespace

Command add_bayes_command(CLI::App& app) {
  auto opts = std::make_shared<BayesSettings>();
  CLI::App* sub = app.add_subcommand("bayes", "the Bayes-optimal error ε_Bayes = 1 − E[Σ_ℓ P_ℓ²] + Δ (prints JSON)");
  add_parameters(sub, bayes_parameters(), *opts);
  return {sub, [opts](const std::vector<std::string>&, bool check_only) { return run_bayes(*opts, check_only); }};
}

}  // namespace headspec::app
