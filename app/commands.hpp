#pragma once
// Subcommands: each registers itself on the app and returns how to run it.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace headspec::app {

struct Command {
  CLI::App* sub = nullptr;
  /// Runs the parsed command with the full command line (kept in sidecars); returns the exit status.
  /// With check_only it returns 0 once every flag is checked, before anything runs or is written.
  std::function<int(const std::vector<std::string>& argv, bool check_only)> run;
};

Command add_simulate_command(CLI::App& app);
Command add_bayes_command(CLI::App& app);
Command add_figure_command(CLI::App& app);
Command add_theory_command(CLI::App& app);
Command add_mnist_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_linearise_command(CLI::App& app);

}  // namespace headspec::app
