#pragma once
// The subcommands' flags from the parameter table, and their output (docs/cli.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include <type_traits>
#include <variant>

#include "headspec/command_settings.hpp"
#include "headspec/parameters.hpp"

namespace headspec::app {

/// The CLI11 options of a subcommand, from its parameter table (docs/cli.md "Parameters"):
/// `--name`, the table's help, the default printed where the table says so.
template <class S>
void add_parameters(CLI::App* app, const ParameterTable<S>& table, S& settings) {
  for (const auto& p : table) {
    const std::string flag = "--" + p.name;
    CLI::Option* opt = std::visit(
        [&](auto* v) -> CLI::Option* {
          using T = std::remove_cvref_t<decltype(*v)>;
          if constexpr (std::is_same_v<T, bool>)
            return app->add_flag(flag, *v, p.help);
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            return app->add_option(flag, *v, p.help)->delimiter(',');
          else
            return app->add_option(flag, *v, p.help);
        },
        p.field(settings));
    if (p.flags & kShowDefault) opt->capture_default_str();
    if (p.flags & kRequired) opt->required();
  }
}

/// Checks the output path of --out (when given); throws UsageError.
void check_out(const std::string& out);

/// Writes the CSV to --out (atomically, with FILE.json beside it) or to stdout.
void write_output(const std::string& out, const std::string& csv, const nlohmann::json& sidecar);

/// Lists the diverged runs in the sidecar ("diverged": [{run, t}]); returns 3 if any did, else 0.
int record_divergence(const std::vector<const Trajectory*>& trajectories, nlohmann::json& sidecar);
/// One line on stderr per diverged run, suggesting a smaller --lr (now `lr`).
void report_divergence(const std::vector<const Trajectory*>& trajectories, double lr);
/// The rows of every run, run by run, for format_csv.
std::vector<const Record*> record_rows(const std::vector<const Trajectory*>& trajectories);

/// The end of an SGD command (simulate, mnist) once every run finished: the divergences into
/// the sidecar, `write_extras` (other output files), the CSV of F latent columns and its
/// sidecar, the checkpoint spent, a divergence reported. Returns the exit status (0 or 3).
int finish_sgd_command(const std::string& out, const std::vector<const Trajectory*>& runs, const ModelSpec& model,
                       int F, nlohmann::json& sidecar, const std::function<void()>& write_extras,
                       const std::function<void()>& checkpoint_spent);

/// A progress line on stderr, only when stderr is a terminal; at most ~5 updates/s.
class Progress {
 public:
  Progress(std::string label, double total);
  void update(const std::string& what, double done);
  void finish();

 private:
  std::string label_;
  double total_;
  bool enabled_;
  long long last_ms_ = 0;
};

}  // namespace headspec::app
