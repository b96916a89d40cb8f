#pragma once
// Flags shared by the subcommands (docs/cli.md "Model flags").
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/settings.hpp"
#include "headspec/simulation.hpp"

namespace headspec::app {

/// The model flags are the library's ModelSettings (one parser for the CLI and Python).
using ModelOptions = ModelSettings;

struct RunOptions {
  double T = 20;
  double record_every = 1;
  int64_t seed = 1;
  std::string out;
};

void add_model_options(CLI::App* app, ModelOptions& o);
void add_run_options(CLI::App* app, RunOptions& o);

/// Builds and validates the model; throws UsageError naming the flag.
inline ModelSpec make_model(const ModelOptions& o) { return o.to_spec(); }
/// Validates T, record interval, seed and the output path; throws UsageError.
void validate_run(const RunOptions& o);


/// Writes the CSV to --out (atomically, with FILE.json beside it) or to stdout.
void write_output(const RunOptions& run, const std::string& csv, const nlohmann::json& sidecar);

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
