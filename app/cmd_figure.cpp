// `headspec figure N [--quick] [--out-dir DIR] [--sde-runs K] [--lr-schedule S] [--mc-method M] [--mc-seed S]`: the
// data and picture of one figure of the seed paper (1 … 14), or of figure 15, Bayes-softmax at ε_Bayes with
// schedules. The figure scripts (python/figures/) call this binary for the numbers and matplotlib for the drawing.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "headspec/errors.hpp"
#include "headspec/lr_schedule.hpp"
#include "headspec/theory_engine.hpp"
#include "headspec/theory_runs.hpp"
#include "options.hpp"
#include "signals.hpp"

namespace headspec::app {
namespace {

struct FigureOptions {
  int number = 0;
  bool quick = false;
  std::string out_dir = "figures";
  int sde_runs = 0;
  std::string lr_schedule;  ///< figure 4: the theory's runs with this schedule (docs/cli.md)
  std::string mc_method;    ///< the theory's Monte Carlo method in every command (empty: its default)
  int64_t mc_seed = -1;     ///< the seed of every command's Monte Carlo samples (−1: each command's own)
};

constexpr int kLastFigure = 15;

std::string self_path() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("headspec") : p.string();
}

// Runs the figure's Python driver and waits for it. SIGINT, SIGTERM and SIGHUP are sent on
// to it (it sends them on to its own headspec children), so that stopping `figure` stops
// everything it started; a driver that died of a signal is reported as that signal (128 + n).
int run_driver(const std::string& python, std::vector<char*>& argv) {
  // Blocked from the fork until the parent forwards them: none is lost in between.
  sigset_t stop, old;
  sigemptyset(&stop);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
  sigprocmask(SIG_BLOCK, &stop, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    execv(python.c_str(), argv.data());
    _exit(127);
  }
  if (pid > 0) forward_signals_to(pid);
  sigprocmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw std::runtime_error(fmt::format("figure: cannot start {}: {}", python, std::strerror(errno)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forward_signals_to(0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int run_figure(const FigureOptions& o, bool check_only) {
  if (o.number < 1 || o.number > kLastFigure)
    throw UsageError(fmt::format("figure: N must be 1 … {}, got {}", kLastFigure, o.number));
  if (!o.lr_schedule.empty()) {
    if (o.number != 4) throw UsageError(fmt::format("--lr-schedule: only figure 4 takes a schedule, not {}", o.number));
    LrSchedule::parse(o.lr_schedule);  // refused here, before the driver starts
  }
  if (!o.mc_method.empty()) parse_sampling_method(o.mc_method);  // refused here, naming --mc-method
  checked_seed("mc-seed", o.mc_seed, "");  // −1 is only the default: each command's own seeds
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
  std::error_code ec;
  if (std::filesystem::exists(o.out_dir, ec) && !std::filesystem::is_directory(o.out_dir, ec))
    throw UsageError(fmt::format("--out-dir: '{}' is not a folder", o.out_dir));
  if (check_only) return 0;
  std::vector<std::string> args{python, script, std::to_string(o.number), "--out-dir", o.out_dir, "--binary",
                                self_path()};
  if (o.quick) args.emplace_back("--quick");
  if (o.sde_runs > 0) {
    args.emplace_back("--sde-runs");
    args.push_back(std::to_string(o.sde_runs));
  }
  if (!o.lr_schedule.empty()) {
    args.emplace_back("--lr-schedule");
    args.push_back(o.lr_schedule);
  }
  if (!o.mc_method.empty()) {
    args.emplace_back("--mc-method");
    args.push_back(o.mc_method);
  }
  if (o.mc_seed >= 0) {
    args.emplace_back("--mc-seed");
    args.push_back(std::to_string(o.mc_seed));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return run_driver(python, argv);
}

}  // namespace

Command add_figure_command(CLI::App& app) {
  auto opts = std::make_shared<FigureOptions>();
  CLI::App* sub = app.add_subcommand("figure", "compute and draw figure N of the seed paper (CSV, JSON, PNG, SVG)");
  sub->add_option("N", opts->number,
                  "figure number: 1 … 14 the seed paper's, 15 Bayes-softmax at ε_Bayes with learning-rate schedules "
                  "(docs/figures.md)")
      ->required()
      ->transform(decimal_text<int>("N"));
  sub->add_flag("--quick", opts->quick, "reduced size (well under a minute on 2 cores)");
  sub->add_option("--out-dir", opts->out_dir, "output folder")->capture_default_str();
  sub->add_option("--sde-runs", opts->sde_runs,
                  "figures 1, 9, 10: also the mean ± sd over K runs of the stochastic theory at the simulation's D "
                  "from its initial state (docs/model.md §12)")
      ->transform(decimal_text<int>("sde-runs"));
  sub->add_option("--lr-schedule", opts->lr_schedule,
                  "figure 4: E^∞ of the theory with this learning-rate schedule (docs/cli.md \"Learning-rate "
                  "schedules\"); its files are named fig4_<schedule>.*");
  sub->add_option("--mc-method", opts->mc_method,
                  "auto | plain | symmetric | sobol | laplace: the Monte Carlo method of every theory, linearise and "
                  "theory-sweep command of the figure (default: theirs, auto: laplace where it applies, sobol "
                  "otherwise; docs/model.md §6, docs/theory.md §2)");
  sub->add_option("--mc-seed", opts->mc_seed,
                  "the seed of the Monte Carlo samples of every theory, stochastic-theory and theory-sweep command "
                  "(their --mc-seed: one sample set shared by all runs of a command) and of every linearise (its "
                  "--seed); the initial states stay those of the figure's seeds (default: each command's own "
                  "samples; docs/figures.md)")
      ->transform(decimal_text<int64_t>("mc-seed"));
  return {sub, [opts](const std::vector<std::string>&, bool check_only) { return run_figure(*opts, check_only); }};
}

}  // namespace headspec::app
