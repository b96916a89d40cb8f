#pragma once
// Single steps of the dense engine from a given state (docs/model.md §4–6): what the theory's
// rates (their mean) and its diffusion Σ (their covariance) are checked against.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "headspec/dense_engine.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_states.hpp"

namespace headspec::testing {

// One case of the one-step comparisons: activation, R ≠ 0 (the general path), batch, noise.
struct OneStepCase {
  Activation activation;
  bool with_R;
  int batch;
  double noise;
  bool gauss_sum = false;  // gauss prior ν = (8, 2) with a fixed readout c_h = 1
};

inline ModelSpec model_of(const OneStepCase& p) {
  ModelSpec m = model_with(p.activation);
  m.batch = p.batch;
  m.noise = p.noise;
  if (p.gauss_sum) {
    m.prior = Prior::gauss(Eigen::Vector2d(8.0, 2.0));
    m.readout = Readout::Sum;
  }
  return m;
}

inline std::string name_of(const OneStepCase& p) {
  return std::string(to_string(p.activation)) + (p.with_R ? "_R" : "") + "_B" + std::to_string(p.batch) +
         (p.noise > 0 ? "_noise" : "") + (p.gauss_sum ? "_gauss_sum" : "");
}

// Keys in R^D with exactly the order parameters op (u_f = √D e_f, v* = √D e_{F+1}, the
// orthogonal parts on the next H coordinates).
inline void set_keys(DenseEngine& engine, const OrderParameters& op) {
  const int64_t D = engine.D();
  const int H = op.H(), F = op.F();
  const double sd = std::sqrt(static_cast<double>(D));
  const Eigen::MatrixXd chol = Eigen::LLT<Eigen::MatrixXd>(op.orthogonal()).matrixL();
  auto& k = engine.keys();
  std::fill(k.begin(), k.end(), 0.0);
  for (int h = 0; h < H; ++h) {
    for (int f = 0; f < F; ++f) k[h * D + f] = sd * op.M(h, f);
    k[h * D + F] = sd * op.R[h];
    for (int j = 0; j < H; ++j) k[h * D + F + 1 + j] = sd * chol(h, j);
  }
  engine.readout() = op.c;
}

// The one-step changes × D/B of the dense engine from state op (t advances by B/D per
// step), `steps` independent steps (step n draws from stream n): one row per step, in
// StateLayout order.
inline Eigen::MatrixXd dense_one_step_changes(const ModelSpec& m, const OrderParameters& op, int64_t D, int steps) {
  const StateLayout layout(m.H, m.F(), m.readout == Readout::Learned);
  DenseEngine engine(m, D, 7);
  std::vector<double> before(layout.size()), after(layout.size());
  set_keys(engine, op);
  layout.pack(engine.order_parameters(), before.data());
  const std::vector<double> keys = engine.keys();
  // Steps at D = 2000 are too short to gain from threads.
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double scale = static_cast<double>(D) / m.batch;
  Eigen::MatrixXd changes(steps, static_cast<Eigen::Index>(layout.size()));
  for (int n = 0; n < steps; ++n) {
    engine.keys() = keys;
    engine.readout() = op.c;
    engine.step(static_cast<uint64_t>(n));
    layout.pack(engine.order_parameters(), after.data());
    for (std::size_t i = 0; i < after.size(); ++i)
      changes(n, static_cast<Eigen::Index>(i)) = (after[i] - before[i]) * scale;
  }
  omp_set_num_threads(saved);
  return changes;
}

}  // namespace headspec::testing
