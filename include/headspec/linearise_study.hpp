#pragma once
// `headspec linearise` without its command line (docs/model.md §6–7): the flags checked, the
// linearisation run for every Monte Carlo seed, with the growth check, the rate along the
// unspecialised trajectory and the τ^s prediction when asked for. The CLI and the Python
// module both call these.
#include <nlohmann/json.hpp>
#include <vector>

#include "headspec/command_settings.hpp"
#include "headspec/linearisation.hpp"

namespace headspec {

struct LineariseStudy {
  ModelSpec model;
  LinearisationSpec spec;  ///< of the first seed
};

/// Checks every flag; throws UsageError (ParameterError where one flag is at fault).
LineariseStudy prepare_linearise(const LineariseSettings& settings);

struct LineariseOutcome {
  std::vector<LinearisationResult> results;  ///< one per Monte Carlo seed
  /// The JSON of `headspec linearise` but for provenance, command and argv.
  nlohmann::json document;
};

LineariseOutcome run_linearise_study(const LineariseSettings& settings, const LineariseStudy& study);

}  // namespace headspec
