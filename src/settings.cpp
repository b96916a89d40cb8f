#include "headspec/settings.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <sstream>

#include "headspec/errors.hpp"

namespace headspec {

std::vector<double> parse_numbers(const std::string& text, const std::string& name) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < item.size() && std::isspace(static_cast<unsigned char>(item[used]))) ++used;
    if (item.empty() || used != item.size()) throw ParameterError(name, fmt::format("'{}' is not a number", item));
    out.push_back(v);
  }
  if (out.empty() || (!text.empty() && text.back() == ','))
    throw ParameterError(name, fmt::format("expected comma-separated numbers, got '{}'", text));
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

void check_runs(uint32_t seed, int runs) {
  if (runs < 1) throw ParameterError("runs", fmt::format("must be at least 1, got {}", runs));
  if (static_cast<int64_t>(seed) + runs - 1 > 0xFFFFFFFFLL)
    throw ParameterError("runs", "seed + runs - 1 must stay below 2^32");
}

ModelSpec ModelSettings::to_spec() const {
  ModelSpec m;
  const auto values = parse_numbers(nu, "nu");
  m.prior = Prior::parse(prior, Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size())));
  m.activation = parse_activation(activation);
  m.readout = parse_readout(readout);
  m.L = L;
  m.H = H;
  m.lr = lr;
  m.readout_lr = lr;
  if (!readout_lr.empty()) {
    const auto v = parse_numbers(readout_lr, "readout-lr");
    if (v.size() != 1) throw ParameterError("readout-lr", "expected one number");
    m.readout_lr = v[0];
  }
  m.batch = batch;
  m.noise = noise;
  m.q0 = q0;
  m.validate();
  return m;
}

}  // namespace headspec
