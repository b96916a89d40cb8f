#include "cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "headspec/eigen_blocking.hpp"
#include "headspec/errors.hpp"
#include "headspec/version.hpp"

namespace headspec::app {
namespace {
// Whether this process is rank 0 of an MPI launch, or not launched by MPI: read from the
// launcher's environment (Open MPI, PMIx, PMI), so that a refusal made before MPI starts —
// while the flags are parsed — is printed once, not once per rank (docs/cluster.md).
bool first_rank_or_alone() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* rank = std::getenv(name); rank != nullptr) return std::string(rank) == "0";
  return true;
}

// One line on stderr (rank 0 only under MPI), exit status 2 (docs/cli.md "Errors").
int usage_error(const std::string& message) {
  if (!first_rank_or_alone()) return 2;
  std::string line = message;
  for (char& ch : line)
    if (ch == '\n') ch = ' ';
  std::cerr << "headspec: error: " << line << "\n";
  return 2;
}

// The first argument when it is a word (not a flag) that names no subcommand: CLI11 would
// report only "A subcommand is required" for a misspelt one.
// The subcommand named `name`, or null.
const Command* command_named(const std::string& name, const std::vector<Command>& commands) {
  for (const Command& c : commands)
    if (c.sub->get_name() == name) return &c;
  return nullptr;
}

std::string unknown_subcommand(int argc, const char* const* argv, const std::vector<Command>& commands) {
  if (argc < 2 || argv[1][0] == '-' || command_named(argv[1], commands) != nullptr) return {};
  return argv[1];
}

// The first --flag on the command line that its subcommand does not have, with the
// subcommand's name; empty if none.
std::string unknown_flag(int argc, const char* const* argv, const std::vector<Command>& commands) {
  const Command* c = argc < 2 ? nullptr : command_named(argv[1], commands);
  if (c == nullptr) return {};
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word == "--") continue;
    word = word.substr(0, word.find('='));
    if (c->sub->get_option_no_throw(word) == nullptr)
      return fmt::format("{}: not a flag of '{}' (headspec {} --help lists them)", word, argv[1], argv[1]);
  }
  return {};
}

// The first argument that is not UTF-8 text, named by its flag: the sidecar records every
// argument (argv, and paths in the model) as JSON text, which must be UTF-8, so such a name
// would fail only when the finished run is written (docs/cli.md "Output files"). nlohmann's
// own check decides, the one the sidecar's writer applies. Empty when every argument is text.
std::string non_utf8_argument(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    try {
      (void)nlohmann::json(std::string(argv[i])).dump();
    } catch (const nlohmann::json::type_error&) {
      const std::string arg = argv[i];
      const std::string flag = arg.rfind("--", 0) == 0   ? arg.substr(0, arg.find('='))
                               : i > 1 && argv[i - 1][0] == '-' ? std::string(argv[i - 1])
                                                                : "argument " + std::to_string(i);
      return fmt::format("{}: not UTF-8 text (a file name must be, as the sidecar records it as JSON)", flag);
    }
  }
  return {};
}

std::string subcommand_names(const std::vector<Command>& commands) {
  std::vector<std::string> names;
  for (const Command& c : commands) names.push_back(c.sub->get_name());
  return fmt::format("{}", fmt::join(names, ", "));
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
  if (const std::string bad = non_utf8_argument(argc, argv); !bad.empty()) return usage_error(bad);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (const std::string word = unknown_subcommand(argc, argv, commands); !word.empty())
      return usage_error(fmt::format("unknown subcommand '{}' (one of: {})", word, subcommand_names(commands)));
    if (const std::string flag = unknown_flag(argc, argv, commands); !flag.empty()) return usage_error(flag);
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
