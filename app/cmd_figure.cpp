// `headspec figure N [--quick] [--out-dir DIR] [--sde-runs K]`: the data and picture of one figure of the
// seed paper. The figure scripts (python/figures/) call this binary for the numbers and
// matplotlib for the drawing.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "headspec/errors.hpp"

namespace headspec::app {
namespace {

struct FigureOptions {
  int number = 0;
  bool quick = false;
  std::string out_dir = "figures";
  int sde_runs = 0;
};

std::string self_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("headspec") : p.string();
}

int run_figure(const FigureOptions& o, bool check_only) {
  if (o.number < 1 || o.number > 14) throw UsageError(fmt::format("figure: N must be 1 … 14, got {}", o.number));
  if (o.sde_runs < 0 || o.sde_runs > 10000)
    throw UsageError(fmt::format("--sde-runs: must be in [0, 10000], got {}", o.sde_runs));
  if (o.sde_runs > 0 && o.number != 1 && o.number != 9 && o.number != 10)
    throw UsageError(fmt::format("--sde-runs: only figures 1, 9 and 10 draw the stochastic theory's band, not {}",
                                 o.number));
  const char* env_python = std::getenv("HEADSPEC_PYTHON");
  const std::string python = env_python ? env_python : "/usr/bin/python3";
  const char* env_dir = std::getenv("HEADSPEC_FIGURES_DIR");
  const std::string script =
      (std::filesystem::path(env_dir ? env_dir : HEADSPEC_SOURCE_DIR "/python/figures") / "make_figure.py").string();
  if (!std::filesystem::exists(script))
    throw UsageError(fmt::format("figure: the figure scripts are missing ({})", script));
  if (::access(python.c_str(), X_OK) != 0)
    throw UsageError(fmt::format("figure: {} not found; run scripts/setup", python));
  if (check_only) return 0;
  std::vector<std::string> args{python, script, std::to_string(o.number), "--out-dir", o.out_dir, "--binary",
                                self_path()};
  if (o.quick) args.emplace_back("--quick");
  if (o.sde_runs > 0) {
    args.emplace_back("--sde-runs");
    args.push_back(std::to_string(o.sde_runs));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv(python.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

Command add_figure_command(CLI::App& app) {
  auto opts = std::make_shared<FigureOptions>();
  CLI::App* sub = app.add_subcommand("figure", "compute and draw figure N of the seed paper (CSV, JSON, PNG, SVG)");
  sub->add_option("N", opts->number, "figure number, 1 … 14")->required();
  sub->add_flag("--quick", opts->quick, "reduced size (well under a minute on 2 cores)");
  sub->add_option("--out-dir", opts->out_dir, "output folder")->capture_default_str();
  sub->add_option("--sde-runs", opts->sde_runs,
                  "figures 1, 9, 10: also the mean ± sd over K runs of the stochastic theory at the simulation's D "
                  "from its initial state (docs/model.md §12)");
  return {sub, [opts](const std::vector<std::string>&, bool check_only) { return run_figure(*opts, check_only); }};
}

}  // namespace headspec::app
