// The dense engine's one-step mean change of (M, Q) from a fixed state equals an
// independent brute-force average of the same SGD formula (docs/model.md §3–5): a naive
// implementation with std::mt19937_64, plain loops and its own attention code.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "headspec/dense_engine.hpp"

using namespace headspec;

namespace {

constexpr int64_t kD = 2000;

// A fixed state with O(1) overlaps: k_h = √D (Σ_f M_hf e_f) + noise of variance 0.5.
std::vector<double> fixed_keys(int H, int F) {
  std::mt19937_64 gen(123);
  std::normal_distribution<double> n(0.0, std::sqrt(0.5));
  std::vector<double> k(H * kD);
  for (auto& v : k) v = n(gen);
  const double M[2][2] = {{0.9, 0.4}, {0.6, -0.5}};
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) k[h * kD + f] = M[h][f] * std::sqrt(double(kD));
  return k;
}

struct Moments {
  Eigen::ArrayXd sum, sum2;
  int n = 0;
  void add(const Eigen::ArrayXd& v) {
    if (n == 0) sum = sum2 = Eigen::ArrayXd::Zero(v.size());
    sum += v;
    sum2 += v * v;
    ++n;
  }
  Eigen::ArrayXd mean() const { return sum / n; }
  Eigen::ArrayXd se() const { return ((sum2 / n - mean().square()) / (n - 1)).sqrt(); }
};

// (D·ΔM, D·ΔQ) flattened.
Eigen::ArrayXd change(const OrderParameters& a, const OrderParameters& b) {
  const int H = a.H(), F = a.F();
  Eigen::ArrayXd v(H * F + H * H);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) v[h * F + f] = kD * (b.M(h, f) - a.M(h, f));
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) v[H * F + h * H + g] = kD * (b.Q(h, g) - a.Q(h, g));
  return v;
}

OrderParameters order_parameters(const std::vector<double>& k, int H, int F) {
  OrderParameters op;
  op.M.resize(H, F);
  op.R.resize(H);
  op.Q.resize(H, H);
  op.c = Eigen::VectorXd::Ones(H);
  for (int h = 0; h < H; ++h) {
    for (int f = 0; f < F; ++f) op.M(h, f) = k[h * kD + f] / std::sqrt(double(kD));
    op.R[h] = k[h * kD + F] / std::sqrt(double(kD));
    for (int g = 0; g < H; ++g) {
      double s = 0;
      for (int64_t d = 0; d < kD; ++d) s += k[h * kD + d] * k[g * kD + d];
      op.Q(h, g) = s / kD;
    }
  }
  return op;
}

// One naive SGD step of docs/model.md §1–4 (flip prior, readout fixed to c).
void naive_step(std::vector<double>& k, int H, int L, const Eigen::Vector2d& nu, Activation act, double c,
                double lr, std::mt19937_64& gen) {
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_int_distribution<int> pos(0, L - 1);
  std::bernoulli_distribution coin(0.5);
  const int lstar = pos(gen);
  const double theta[2] = {std::sqrt(nu[0]), (coin(gen) ? 1 : -1) * std::sqrt(nu[1])};
  std::vector<double> x(L * kD);
  for (auto& v : x) v = n(gen);
  x[lstar * kD + 0] += theta[0];
  x[lstar * kD + 1] += theta[1];
  const double sq = std::sqrt(double(kD));
  std::vector<double> s(H * L), A(H * L), g(L);
  for (int l = 0; l < L; ++l) g[l] = x[l * kD + 2];
  for (int h = 0; h < H; ++h)
    for (int l = 0; l < L; ++l) {
      double v = 0;
      for (int64_t d = 0; d < kD; ++d) v += k[h * kD + d] * x[l * kD + d];
      s[h * L + l] = v / sq;
    }
  double total = 0;
  for (int h = 0; h < H; ++h) {
    double z = act == Activation::Softmax1 ? 1.0 : 0.0, zall = 0;
    for (int l = 0; l < L; ++l) z += std::exp(s[h * L + l]);
    for (int l = 0; l < L; ++l) A[h * L + l] = std::exp(s[h * L + l]) / z;
    (void)zall;
  }
  if (act == Activation::BayesSoftmax) {
    double z = 0;
    for (int i = 0; i < H * L; ++i) z += std::exp(s[i]);
    for (int i = 0; i < H * L; ++i) A[i] = std::exp(s[i]) / z;
  }
  if (act == Activation::Sigmoid)
    for (int i = 0; i < H * L; ++i) A[i] = 1 / (1 + std::exp(-s[i]));
  for (int h = 0; h < H; ++h)
    for (int l = 0; l < L; ++l) total += c * A[h * L + l] * g[l];
  const double r = total - g[lstar];
  for (int h = 0; h < H; ++h) {
    double head = 0;
    for (int l = 0; l < L; ++l) head += A[h * L + l] * g[l];
    for (int l = 0; l < L; ++l) {
      // ∂ŷ/∂s_hℓ, written from the definitions rather than from the kernel.
      const double a = A[h * L + l];
      const double J = act == Activation::BayesSoftmax ? a * (c * g[l] - total)
                       : act == Activation::Sigmoid    ? c * a * (1 - a) * g[l]
                                                       : c * a * (g[l] - head);
      for (int64_t d = 0; d < kD; ++d) k[h * kD + d] -= lr * r * J * x[l * kD + d] / sq;
    }
  }
}

class DenseOneStep : public ::testing::TestWithParam<Activation> {};

TEST_P(DenseOneStep, MeanChangeMatchesBruteForce) {
  const int H = 2, F = 2, L = 4;
  const int steps = 6000;
  ModelSpec model;
  model.prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  model.activation = GetParam();
  model.readout = Readout::Sum;
  model.L = L;
  model.H = H;
  model.lr = 1.0;
  const auto k0 = fixed_keys(H, F);
  const OrderParameters start = order_parameters(k0, H, F);

  DenseEngine engine(model, kD, 77);
  Moments fast, naive;
  for (int n = 0; n < steps; ++n) {
    engine.keys() = k0;
    engine.step(static_cast<uint64_t>(n));
    fast.add(change(start, engine.order_parameters()));
  }
  std::mt19937_64 gen(2024);
  for (int n = 0; n < steps; ++n) {
    auto k = k0;
    naive_step(k, H, L, Eigen::Vector2d(2.0, 2.0), model.activation, 1.0, model.lr, gen);
    naive.add(change(start, order_parameters(k, H, F)));
  }
  const Eigen::ArrayXd z = (fast.mean() - naive.mean()) / (fast.se().square() + naive.se().square()).sqrt();
  for (Eigen::Index i = 0; i < z.size(); ++i)
    EXPECT_LT(std::abs(z[i]), 4.0) << "component " << i << ": engine " << fast.mean()[i] << " ± " << fast.se()[i]
                                   << ", brute force " << naive.mean()[i] << " ± " << naive.se()[i];
  // The test has power: some drift is resolved well beyond its error (not noise on both sides).
  EXPECT_GT((fast.mean() / fast.se()).abs().maxCoeff(), 5.0) << fast.mean().transpose();
}

INSTANTIATE_TEST_SUITE_P(Activations, DenseOneStep,
                         ::testing::Values(Activation::Softmax, Activation::Softmax1, Activation::BayesSoftmax,
                                           Activation::Sigmoid));

}  // namespace
