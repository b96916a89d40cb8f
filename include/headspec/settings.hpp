#pragma once
// The model's settings as a user writes them (names and lists, as on the command line or
// as Python keywords), turned into a validated ModelSpec in one place.
#include <cstdint>
#include <string>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/named_file.hpp"

namespace headspec {

/// The numbers (ModelNumbers) and the named choices as text; the flags are model_parameters().
struct ModelSettings : ModelNumbers {
  std::string prior = "flip";  ///< flip | gauss | spike | mixture:FILE
  std::string nu = "2,2";      ///< comma-separated ν_f
  std::string activation = "softmax";
  std::string readout = "learned";
  std::string readout_lr;  ///< empty: η
  std::string lr_schedule = "constant";  ///< LrSchedule::parse's spellings

  /// Builds and validates the model; throws ParameterError naming the flag at fault.
  ModelSpec to_spec() const;
  /// The files the model's flags name, which the run reads: --prior mixture:FILE and
  /// --lr-schedule table:FILE (RunFiles::input: no output of the run may be one of them).
  std::vector<NamedFile> input_files() const;
};

/// A seed given as a wider integer, checked to fit the generator's 32-bit key.
uint32_t checked_seed(int64_t seed);

/// Checks --T (finite, >= 0) and --record-every (> 0, at most 10^7 records); throws ParameterError.
void check_horizon(double T, double record_every);
/// Checks --runs (>= 1) and that run k's seed, seed + k, stays below 2^32; throws ParameterError
/// naming `name` (another flag that counts seeds: linearise's --mc-seeds).
void check_runs(uint32_t seed, int runs, const std::string& name = "runs");

/// Parses "2,2" into numbers; throws ParameterError naming the parameter `name` ("nu").
std::vector<double> parse_numbers(const std::string& text, const std::string& name);
/// parse_numbers for a flag spelled with its dashes ("--nu").
std::vector<double> parse_list(const std::string& text, const std::string& flag);

}  // namespace headspec
