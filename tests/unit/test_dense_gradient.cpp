// The dense engine's SGD step (docs/model.md §3–4) against central finite differences of the
// per-sample loss.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "headspec/dense_engine.hpp"

using namespace headspec;

namespace {

// ½(ŷ − y)² of one sample as a function of the keys and readout (tokens X: L rows of D).
double sample_loss(const ModelSpec& model, const std::vector<double>& keys, const Eigen::VectorXd& c,
                   const std::vector<double>& X, double y, int64_t D) {
  RowMatrix S(model.H, model.L);
  Eigen::VectorXd g(model.L);
  for (int l = 0; l < model.L; ++l) g[l] = X[l * D + model.F()];
  for (int h = 0; h < model.H; ++h)
    for (int l = 0; l < model.L; ++l) {
      double v = 0;
      for (int64_t d = 0; d < D; ++d) v += keys[h * D + d] * X[l * D + d];
      S(h, l) = v / std::sqrt(double(D));
    }
  AttentionKernel k(model.activation, model.H, model.L);
  k.forward(S, g, c);
  return 0.5 * (k.output() - y) * (k.output() - y);
}

class DenseGradient : public ::testing::TestWithParam<Activation> {};

// One SGD step moves every key coordinate by −η ∂/∂k of ½(ŷ − y)² and the learned readout by
// −(η_c/D) ∂/∂c (docs/model.md §3–4): checked against central finite differences in all H·D
// coordinates, with label noise on.
TEST_P(DenseGradient, StepIsMinusLearningRateTimesFiniteDifferenceGradient) {
  ModelSpec model;
  model.prior = Prior::gauss(Eigen::Vector2d(3.0, 1.0));
  model.activation = GetParam();
  model.readout = Readout::Learned;
  model.L = 4;
  model.H = 3;
  model.lr = 0.7;
  model.readout_lr = 0.3;
  model.noise = 0.2;
  const int64_t D = 40;
  DenseEngine engine(model, D, 11);
  for (int warm = 0; warm < 200; ++warm) engine.step(warm);  // a generic state, away from the start
  const std::vector<double> k0 = engine.keys();
  const Eigen::VectorXd c0 = engine.readout();
  engine.step(1000);
  const auto& X = engine.last_tokens();
  const double y = engine.last_target();
  const double eps = 1e-6;
  for (int64_t i = 0; i < model.H * D; ++i) {
    auto kp = k0, km = k0;
    kp[i] += eps;
    km[i] -= eps;
    const double fd = (sample_loss(model, kp, c0, X, y, D) - sample_loss(model, km, c0, X, y, D)) / (2 * eps);
    EXPECT_NEAR(engine.keys()[i] - k0[i], -model.lr * fd, 1e-7 * (1 + std::abs(fd))) << "coordinate " << i;
  }
  for (int h = 0; h < model.H; ++h) {
    Eigen::VectorXd cp = c0, cm = c0;
    cp[h] += eps;
    cm[h] -= eps;
    const double fd = (sample_loss(model, k0, cp, X, y, D) - sample_loss(model, k0, cm, X, y, D)) / (2 * eps);
    EXPECT_NEAR(engine.readout()[h] - c0[h], -model.readout_lr / D * fd, 1e-9) << "readout " << h;
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, DenseGradient,
                         ::testing::ValuesIn(all_activations()));

}  // namespace
