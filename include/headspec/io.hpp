#pragma once
// Output: CSV tables in the columns of docs/cli.md, JSON sidecars, atomic writes.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/atomic_file.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/run_files.hpp"

namespace headspec {


/// A CSV table of records (header line, then one row per record), numbers in their
/// shortest exact decimal form.
/// The standard errors `kind` names follow the values (csv_columns): CsvErrors::loss writes
/// each record's loss_se; CsvErrors::all needs `errors`, one per record (the standard errors
/// of loss and of every value column, TheoryResult::mc_error).
std::string format_csv(const std::vector<const Record*>& records, int H, int F, bool with_readout,
                       CsvErrors kind = CsvErrors::none,
                       const std::vector<const std::vector<double>*>* errors = nullptr);

/// {"program", "version", "git_revision"} for every sidecar.
nlohmann::json provenance();

}  // namespace headspec
