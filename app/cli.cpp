#include "cli.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "headspec/eigen_blocking.hpp"
#include "headspec/errors.hpp"
#include "headspec/version.hpp"

namespace headspec::app {
namespace {
// One line on stderr, exit status 2 (docs/cli.md "Errors").
int usage_error(const std::string& message) {
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n') ch = ' ';
  std::cerr << "headspec: error: " << line << "\n";
  return 2;
}
}  // namespace

int run_cli(int argc, const char* const* argv, bool check_only) {
  headspec::fix_eigen_blocking();
  CLI::App app{"headspec: training dynamics of multi-head attention in the single-location model"};
  app.set_version_flag("--version", fmt::format("headspec {} ({})", headspec::kVersion, headspec::kGitRevision));
  app.require_subcommand(1);
  std::vector<Command> commands;
  commands.push_back(add_simulate_command(app));
  commands.push_back(add_bayes_command(app));
  commands.push_back(add_figure_command(app));
  commands.push_back(add_theory_command(app));
  commands.push_back(add_mnist_command(app));
  commands.push_back(add_sweep_command(app));
  commands.push_back(add_linearise_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }
  try {
    const std::vector<std::string> args(argv, argv + argc);
    for (auto& c : commands)
      if (c.sub->parsed()) return c.run(args, check_only);
  } catch (const headspec::ParameterError& e) {
    return usage_error("--" + e.name() + ": " + e.reason());  // the parameter as its flag
  } catch (const headspec::UsageError& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "headspec: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace headspec::app
