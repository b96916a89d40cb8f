#pragma once
// Flags shared by the subcommands (INTERFACE.md "Model flags").
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/model.hpp"

namespace headspec::app {

struct ModelOptions {
  std::string prior = "flip";
  std::string nu = "2,2";
  int L = 10;
  int H = 2;
  std::string activation = "softmax";
  std::string readout = "learned";
  std::string readout_lr;  // empty: η
  double lr = 1.0;
  int batch = 1;
  double noise = 0.0;
  double q0 = 1.0;
};

struct RunOptions {
  double T = 20;
  double record_every = 1;
  int64_t seed = 1;
  std::string out;
};

void add_model_options(CLI::App* app, ModelOptions& o);
void add_run_options(CLI::App* app, RunOptions& o);

/// Builds and validates the model; throws UsageError naming the flag.
ModelSpec make_model(const ModelOptions& o);
/// Validates T, record interval, seed and the output path; throws UsageError.
void validate_run(const RunOptions& o);

/// Parses "2,2" into a vector; throws UsageError naming flag.
std::vector<double> parse_list(const std::string& text, const std::string& flag);

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
