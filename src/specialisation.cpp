#include "headspec/specialisation.hpp"

#include <limits>

namespace headspec {

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

}  // namespace headspec
