#include "headspec/specialisation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "headspec/errors.hpp"

namespace headspec {

void check_delta(double delta, bool zero_is_off) {
  if (!(std::isfinite(delta) && (delta > 0 || (zero_is_off && delta == 0))))
    throw ParameterError("delta", fmt::format("must be > 0, got {}", delta));
}

double head_spread(const Eigen::MatrixXd& M, int f) {
  const auto column = M.col(f);
  return (column.array() - column.mean()).matrix().norm();
}

std::vector<double> specialisation_times(std::span<const Record> records, double delta) {
  if (records.empty()) return {};
  const int F = records.front().op.F();
  std::vector<double> tau(static_cast<std::size_t>(F), std::numeric_limits<double>::quiet_NaN());
  for (int f = 0; f < F; ++f)
    for (const Record& r : records)
      if (head_spread(r.op.M, f) > delta) {
        tau[static_cast<std::size_t>(f)] = r.t;
        break;
      }
  return tau;
}

std::vector<int> watched_directions(const ModelSpec& model, double delta, std::span<const Record> records) {
  std::vector<int> watched;
  if (delta <= 0) return watched;
  const Eigen::VectorXd mean = model.prior.mean();
  for (int f = 0; f < model.F(); ++f)
    if (mean[f] == 0) watched.push_back(f);
  for (const Record& r : records) std::erase_if(watched, [&](int f) { return head_spread(r.op.M, f) > delta; });
  return watched;
}

bool all_specialised(std::vector<int>& watched, const Eigen::MatrixXd& M, double delta) {
  if (watched.empty()) return false;
  std::erase_if(watched, [&](int f) { return head_spread(M, f) > delta; });
  return watched.empty();
}

}  // namespace headspec
