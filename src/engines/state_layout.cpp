#include "headspec/theory_engine.hpp"

#include <algorithm>
#include <cmath>

namespace headspec {

OrderParameters unspecialised_state(const ModelSpec& model) {
  OrderParameters op;
  op.M = Eigen::MatrixXd::Zero(model.H, model.F());
  op.R = Eigen::VectorXd::Zero(model.H);
  op.Q = model.q0 * Eigen::MatrixXd::Identity(model.H, model.H);
  op.c = model.initial_readout();
  return op;
}

StateLayout::StateLayout(int H, int F, bool learned_readout)
    : H_(H),
      F_(F),
      learned_(learned_readout),
      q_end_(static_cast<std::size_t>(H * F + H + H * (H + 1) / 2)),
      size_(q_end_ + (learned_readout ? static_cast<std::size_t>(H) : 0)) {}

std::size_t StateLayout::q_index(int h, int g) const {
  if (g < h) std::swap(h, g);
  // Rows 0..h−1 of the upper triangle hold Σ_{i<h} (H − i) entries.
  return static_cast<std::size_t>(H_ * F_ + H_ + h * H_ - h * (h - 1) / 2 + (g - h));
}

void StateLayout::pack(const OrderParameters& op, double* x) const {
  for (int h = 0; h < H_; ++h)
    for (int f = 0; f < F_; ++f) x[m_index(h, f)] = op.M(h, f);
  for (int h = 0; h < H_; ++h) x[r_index(h)] = op.R[h];
  for (int h = 0; h < H_; ++h)
    for (int g = h; g < H_; ++g) x[q_index(h, g)] = op.Q(h, g);
  if (learned_)
    for (int h = 0; h < H_; ++h) x[c_index(h)] = op.c[h];
}

OrderParameters StateLayout::unpack(const double* x, const Eigen::VectorXd& fixed_c) const {
  OrderParameters op;
  op.M.resize(H_, F_);
  op.R.resize(H_);
  op.Q.resize(H_, H_);
  for (int h = 0; h < H_; ++h)
    for (int f = 0; f < F_; ++f) op.M(h, f) = x[m_index(h, f)];
  for (int h = 0; h < H_; ++h) op.R[h] = x[r_index(h)];
  for (int h = 0; h < H_; ++h)
    for (int g = 0; g < H_; ++g) op.Q(h, g) = x[q_index(h, g)];
  if (learned_) {
    op.c.resize(H_);
    for (int h = 0; h < H_; ++h) op.c[h] = x[c_index(h)];
  } else {
    op.c = fixed_c;
  }
  return op;
}

double TheoryEvaluation::max_abs_rate() const {
  double m = 0;
  for (double v : rate) m = std::max(m, std::abs(v));
  return m;
}

}  // namespace headspec
