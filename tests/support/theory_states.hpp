#pragma once
// The model and the state the theory tests start from (docs/model.md §6–7): flip ν = (2, 2),
// L = 10, H = 2, learned readout, η = 1, and a state away from the symmetric start.
#include <Eigen/Dense>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec::testing {

inline ModelSpec model_with(Activation a) {
  ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, learned readout, η = 1
  m.activation = a;
  return m;
}

// A state away from the symmetric start, where every rate is sizeable.
inline OrderParameters test_state(const ModelSpec& m, bool with_R) {
  OrderParameters op;
  op.M.resize(2, 2);
  op.M << 0.9, 0.4, 0.6, -0.5;
  op.R = Eigen::VectorXd::Zero(2);
  if (with_R) op.R << 0.3, -0.2;
  Eigen::Matrix2d ortho;
  ortho << 0.8, 0.2, 0.2, 0.6;
  op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + ortho;
  op.c = m.initial_readout();
  if (m.readout == Readout::Learned) op.c << 0.7, 0.4;
  return op;
}

// A state of H heads away from every symmetric subspace: M, Q = MMᵀ + RRᵀ + Q⊥, learned c.
inline OrderParameters generic_state(const ModelSpec& m, bool with_R) {
  const int H = m.H, F = m.F();
  OrderParameters op;
  op.M.resize(H, F);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) op.M(h, f) = 0.3 + 0.37 * h - 0.21 * f + 0.05 * h * f * (h % 2 ? -1 : 1);
  op.R = Eigen::VectorXd::Zero(H);
  if (with_R)
    for (int h = 0; h < H; ++h) op.R[h] = 0.1 * (h + 1) * (h % 2 ? -1 : 1);
  Eigen::MatrixXd ortho = 0.5 * Eigen::MatrixXd::Identity(H, H);
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) ortho(h, g) += 0.04 * (h + 1) * (g + 1) + (h == g ? 0.03 * h : 0.0);
  op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + ortho;
  op.c = m.initial_readout();
  if (m.readout == Readout::Learned)
    for (int h = 0; h < H; ++h) op.c[h] = 0.6 - 0.07 * h;
  return op;
}

}  // namespace headspec::testing
