#pragma once
// Output: CSV tables in the columns of docs/cli.md, JSON sidecars, atomic writes.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/order_parameters.hpp"

namespace headspec {

/// Writes content to path whole or not at all: a temporary file in the same folder,
/// flushed, then renamed over path. Throws std::runtime_error on failure.
void write_file_atomic(const std::string& path, const std::string& content);

/// A CSV table of records (header line, then one row per record), numbers in their
/// shortest exact decimal form.
/// With `errors` (one per record: the standard errors of loss and of every value column,
/// TheoryResult::mc_error), the columns loss_se and <column>_se follow the values.
std::string format_csv(const std::vector<const Record*>& records, int H, int F, bool with_readout,
                       const std::vector<const std::vector<double>*>* errors = nullptr);

/// {"program", "version", "git_revision"} for every sidecar.
nlohmann::json provenance();

/// Throws UsageError if the folder of path does not exist or is not writable, so that
/// a run does not fail only at the end.
void check_output_path(const std::string& path, const std::string& flag);

}  // namespace headspec
