#include "headspec/settings.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <sstream>

#include "headspec/errors.hpp"
#include "headspec/number_text.hpp"

namespace headspec {

std::vector<double> parse_numbers(const std::string& text, const std::string& name) {
  std::vector<double> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Blanks around an item are allowed ("2, 2"); a blank item is not a number.
    const auto first = item.find_first_not_of(" \t");
    item = first == std::string::npos ? std::string() : item.substr(first, item.find_last_not_of(" \t") - first + 1);
    if (item.empty())
      throw ParameterError(name, fmt::format("expected comma-separated numbers, got '{}' (an empty item)", text));
    out.push_back(parse_decimal(item, name));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> parse_list(const std::string& text, const std::string& flag) {
  return parse_numbers(text, flag.rfind("--", 0) == 0 ? flag.substr(2) : flag);
}

uint32_t checked_seed(int64_t seed) {
  if (seed < 0 || seed > 0xFFFFFFFFLL) throw ParameterError("seed", fmt::format("must be in [0, 2^32), got {}", seed));
  return static_cast<uint32_t>(seed);
}

void check_horizon(double T, double record_every) {
  if (!(std::isfinite(T) && T >= 0)) throw ParameterError("T", fmt::format("horizon must be >= 0, got {}", T));
  if (!(std::isfinite(record_every) && record_every > 0))
    throw ParameterError("record-every", fmt::format("must be > 0, got {}", record_every));
  if (T / record_every > 1e7) throw ParameterError("record-every", "more than 10^7 records; choose a larger interval");
}

void check_runs(uint32_t seed, int runs, const std::string& name) {
  if (runs < 1) throw ParameterError(name, fmt::format("must be at least 1, got {}", runs));
  if (static_cast<int64_t>(seed) + runs - 1 > 0xFFFFFFFFLL)
    throw ParameterError(name, fmt::format("seed + {} - 1 must stay below 2^32", name));
}

std::vector<NamedFile> ModelSettings::input_files() const {
  std::vector<NamedFile> files;
  auto file_of = [&](const std::string& flag, const std::string& value, const std::string& kind) {
    if (value.size() > kind.size() && value.compare(0, kind.size(), kind) == 0)
      files.push_back({flag, value.substr(kind.size())});
  };
  file_of("--prior", prior, "mixture:");
  file_of("--lr-schedule", lr_schedule, "table:");
  return files;
}

ModelSpec ModelSettings::to_spec() const {
  ModelSpec m;
  static_cast<ModelNumbers&>(m) = *this;
  const auto values = parse_numbers(nu, "nu");
  m.prior = Prior::parse(prior, Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size())));
  m.activation = parse_activation(activation);
  m.readout = parse_readout(readout);
  m.readout_lr = lr;
  if (!readout_lr.empty()) {
    const auto v = parse_numbers(readout_lr, "readout-lr");
    if (v.size() != 1) throw ParameterError("readout-lr", "expected one number");
    m.readout_lr = v[0];
  }
  m.lr_schedule = LrSchedule::parse(lr_schedule);
  m.validate();
  return m;
}

}  // namespace headspec
