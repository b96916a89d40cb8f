#include "headspec/order_parameters.hpp"

#include <fmt/format.h>

#include <cmath>

namespace headspec {

Eigen::MatrixXd OrderParameters::orthogonal() const {
  return Q - M * M.transpose() - R * R.transpose();
}

double OrderParameters::cosine(int h, int g) const { return Q(h, g) / std::sqrt(Q(h, h) * Q(g, g)); }

bool OrderParameters::all_finite() const {
  return M.allFinite() && R.allFinite() && Q.allFinite() && c.allFinite();
}

std::vector<std::string> csv_columns(int H, int F, bool with_readout, CsvErrors errors) {
  std::vector<std::string> cols{"run", "t", "loss"};
  for (int h = 1; h <= H; ++h)
    for (int f = 1; f <= F; ++f) cols.push_back(fmt::format("M_{}_{}", h, f));
  for (int h = 1; h <= H; ++h) cols.push_back(fmt::format("R_{}", h));
  for (int h = 1; h <= H; ++h)
    for (int g = h; g <= H; ++g) cols.push_back(fmt::format("Q_{}_{}", h, g));
  if (with_readout)
    for (int h = 1; h <= H; ++h) cols.push_back(fmt::format("c_{}", h));
  for (int h = 1; h <= H; ++h) cols.push_back(fmt::format("ortho_{}", h));
  for (int h = 1; h <= H; ++h)
    for (int g = h + 1; g <= H; ++g) cols.push_back(fmt::format("cos_{}_{}", h, g));
  if (errors == CsvErrors::loss) cols.emplace_back("loss_se");
  if (errors == CsvErrors::all)
    for (std::size_t c = 2, n = cols.size(); c < n; ++c) cols.push_back(cols[c] + "_se");  // loss, then the values
  return cols;
}

void append_csv_values(const Record& r, bool with_readout, std::vector<double>& out) {
  const auto& op = r.op;
  const int H = op.H(), F = op.F();
  out.push_back(r.loss);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) out.push_back(op.M(h, f));
  for (int h = 0; h < H; ++h) out.push_back(op.R[h]);
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g) out.push_back(op.Q(h, g));
  if (with_readout)
    for (int h = 0; h < H; ++h) out.push_back(op.c[h]);
  const Eigen::MatrixXd ortho = op.orthogonal();
  for (int h = 0; h < H; ++h) out.push_back(ortho(h, h));
  for (int h = 0; h < H; ++h)
    for (int g = h + 1; g < H; ++g) out.push_back(op.cosine(h, g));
}

}  // namespace headspec
