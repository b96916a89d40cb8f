// `headspec linearise`: the theory's ODE (docs/model.md §6–7) linearised at the unspecialised
// fixed point; its unstable eigenvalue predicts the specialisation time (docs/cli.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/io.hpp"
#include "headspec/linearise_study.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

int run_linearise(const LineariseSettings& o, const std::vector<std::string>& argv, bool check_only) {
  const LineariseStudy study = prepare_linearise(o);
  check_budget(linearise_budget(o, o.to_spec()), o);
  const ThreadLimit thread_limit(o.threads);  // --threads, for the rest of the command
  run_files(o.out, o, /*sidecar=*/false).check();  // the JSON is the output
  if (check_only) return 0;

  nlohmann::json out = provenance();
  out["command"] = "linearise";
  out["argv"] = argv;
  out.update(run_linearise_study(o, study).document);
  const std::string text = out.dump(2) + "\n";
  if (to_stdout(o.out))
    write_stdout(text);
  else
    write_file_atomic(o.out, text);
  if (!out["fixed_point"]["settled"].get<bool>())
    std::cerr << fmt::format("headspec: the approach did not settle (every |rate| < {}) by --T-max {}; linearised "
                             "at the last state after Newton's method (residual {:.3g})\n",
                             study.spec.settle, study.spec.T_max, out["fixed_point"]["residual"].get<double>());
  const nlohmann::json& over_seeds = out["lambda_plus_over_seeds"];
  if (o.mc_seeds > 1 && over_seeds.contains("note"))
    std::cerr << "headspec: lambda_plus_over_seeds: " << over_seeds["note"].get<std::string>() << "\n";
  return 0;
}

}  // namespace

Command add_linearise_command(CLI::App& app) {
  auto o = std::make_shared<LineariseSettings>();
  CLI::App* sub = app.add_subcommand(
      "linearise", "the theory's ODE linearised at the unspecialised fixed point: its unstable eigenvalue (JSON)");
  add_parameters(sub, linearise_parameters(), *o);
  return {sub, [o](const std::vector<std::string>& argv, bool check_only) { return run_linearise(*o, argv, check_only); }};
}

}  // namespace headspec::app
