#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/version.hpp"

namespace headspec {

std::string format_csv(const std::vector<const Record*>& records, int H, int F, bool with_readout, CsvErrors kind,
                       const std::vector<const std::vector<double>*>* errors) {
  if (kind == CsvErrors::all && (errors == nullptr || errors->size() != records.size()))
    throw std::logic_error("format_csv: CsvErrors::all needs one error row per record");
  fmt::memory_buffer out;
  const auto cols = csv_columns(H, F, with_readout, kind);
  fmt::format_to(std::back_inserter(out), "{}\n", fmt::join(cols, ","));
  std::vector<double> values;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record* r = records[i];
    values.clear();
    append_csv_values(*r, with_readout, values);
    fmt::format_to(std::back_inserter(out), "{},{}", r->run, r->t);
    for (double v : values) fmt::format_to(std::back_inserter(out), ",{}", v);
    if (kind == CsvErrors::loss) fmt::format_to(std::back_inserter(out), ",{}", r->loss_se);
    if (kind == CsvErrors::all)
      for (double v : *(*errors)[i]) fmt::format_to(std::back_inserter(out), ",{}", v);
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

nlohmann::json provenance() {
  return {{"program", "headspec"}, {"version", kVersion}, {"git_revision", kGitRevision}};
}

}  // namespace headspec
