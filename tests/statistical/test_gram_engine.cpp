// The reduced engine (docs/model.md §9) on its own: the exact first two moments of one step's
// change of Q against both engines, the law of the initial keys, and the invariants of long
// runs with generic and degenerate keys.
#include <gtest/gtest.h>

#include <omp.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "headspec/dense_engine.hpp"
#include "headspec/gram_engine.hpp"
#include "headspec/kernel.hpp"

using namespace headspec;

namespace {

// A generic state: M, R, Q⊥ of order one, learned readout away from 1/H.
OrderParameters generic_state() {
  OrderParameters op;
  op.M.resize(2, 2);
  op.M << 0.5, 0.3, 0.2, -0.4;
  op.R.resize(2);
  op.R << 0.1, -0.05;
  Eigen::MatrixXd Qperp(2, 2);
  Qperp << 0.8, 0.3, 0.3, 0.6;
  op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + Qperp;
  op.c.resize(2);
  op.c << 0.7, 0.4;
  return op;
}

ModelSpec small_model() {
  ModelSpec m;
  m.prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  m.activation = Activation::Softmax;
  m.readout = Readout::Learned;
  m.L = 4;
  m.H = 2;
  m.noise = 0.1;
  return m;
}

struct Moments {
  Eigen::Matrix2d mean = Eigen::Matrix2d::Zero(), second = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d se_mean = Eigen::Matrix2d::Zero(), se_second = Eigen::Matrix2d::Zero();
};

// Accumulates per-draw values a (estimates of E ΔQ) and b (of E ΔQ²) into means and
// standard errors.
class Accumulator {
 public:
  void add(const Eigen::Matrix2d& a, const Eigen::Matrix2d& b) {
    sa_ += a;
    sa2_ += a.cwiseProduct(a);
    sb_ += b;
    sb2_ += b.cwiseProduct(b);
    ++n_;
  }
  Moments result() const {
    Moments m;
    m.mean = sa_ / n_;
    m.second = sb_ / n_;
    m.se_mean = ((sa2_ / n_ - m.mean.cwiseProduct(m.mean)) / n_).cwiseMax(0.0).cwiseSqrt();
    m.se_second = ((sb2_ / n_ - m.second.cwiseProduct(m.second)) / n_).cwiseMax(0.0).cwiseSqrt();
    return m;
  }

 private:
  Eigen::Matrix2d sa_ = Eigen::Matrix2d::Zero(), sa2_ = sa_, sb_ = sa_, sb2_ = sa_;
  long n_ = 0;
};

// The exact moments of ΔQ = Q' − Q after one SGD step (docs/model.md §4) from keys with order
// parameters op at dimension D, derived independently of the engines: write each token
// x_ℓ = Σ_i ω_ℓi b_i + z⊥_ℓ with b the orthonormal frame (u/√D, v*/√D, the keys' own
// directions, r = F+1+H vectors) and z⊥ the part outside it. The scores, the residual and
// G = r J depend on ω (and ℓ*, θ, ξ) only, and k_h' = k_h − (η/√D) Σ_ℓ G_hℓ x_ℓ gives, with
// ε = η/D, S = κ ωᵀ and W_ℓℓ' = z⊥_ℓ·z⊥_ℓ',
//   ΔQ = −ε (G Sᵀ + S Gᵀ) + ε² G ω ωᵀ Gᵀ + ε² G W Gᵀ,
// where, given ω, W ~ Wishart_L(D − r, I): E[G W Gᵀ]_hh' = (D−r) G_h·G_h' and
// Var[G W Gᵀ]_hh' = (D−r)(|G_h|²|G_h'|² + (G_h·G_h')²). So E ΔQ = E_ω[m] and
// E ΔQ² = E_ω[m² + v] with m, v the conditional mean and variance: a Gaussian integral over
// the frame coordinates, done here by Monte Carlo with its own generator.
Moments exact_step_moments(const ModelSpec& model, const OrderParameters& op, int64_t D, int samples) {
  const int F = model.F(), H = model.H, L = model.L, r = F + 1 + H;
  const double n_out = static_cast<double>(D - r), eps = model.lr / static_cast<double>(D);
  RowMatrix kappa(H, r);
  kappa.leftCols(F) = op.M;
  kappa.col(F) = op.R;
  kappa.rightCols(H) = Eigen::LLT<Eigen::MatrixXd>(op.orthogonal()).matrixL();
  std::mt19937_64 gen(20240611);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> position(0, L - 1), sign(0, 1);
  AttentionKernel kernel(model.activation, H, L);
  RowMatrix omega(L, r), J;
  Accumulator acc;
  for (int s = 0; s < samples; ++s) {
    for (int l = 0; l < L; ++l)
      for (int i = 0; i < r; ++i) omega(l, i) = normal(gen);
    const int lstar = position(gen);
    // flip prior (docs/model.md §2): θ_1 = √ν_1, θ_f = ±√ν_f.
    const Eigen::VectorXd& nu = model.prior.nu();
    omega(lstar, 0) += std::sqrt(nu[0]);
    for (int f = 1; f < F; ++f) omega(lstar, f) += (sign(gen) ? 1.0 : -1.0) * std::sqrt(nu[f]);
    const RowMatrix S = kappa * omega.transpose();
    const Eigen::VectorXd g = omega.col(F);
    kernel.forward(S, g, op.c);
    const double res = kernel.output() - (g[lstar] + std::sqrt(model.noise) * normal(gen));
    kernel.apply_jacobian(g, J);
    const RowMatrix G = res * J;
    const Eigen::MatrixXd GG = G * G.transpose();
    const Eigen::Matrix2d m = -eps * (G * S.transpose() + S * G.transpose()) +
                              eps * eps * (G * omega * omega.transpose() * G.transpose()) + eps * eps * n_out * GG;
    Eigen::Matrix2d v;
    for (int h = 0; h < H; ++h)
      for (int k = 0; k < H; ++k) v(h, k) = std::pow(eps, 4) * n_out * (GG(h, h) * GG(k, k) + GG(h, k) * GG(h, k));
    acc.add(m, m.cwiseProduct(m) + v);
  }
  return acc.result();
}

// |z| < 4 for each of the 6 moments (3 entries × mean and second moment).
void expect_moments_agree(const Moments& exact, const Moments& emp, const char* engine) {
  for (int h = 0; h < 2; ++h)
    for (int k = h; k < 2; ++k) {
      const double z1 = (emp.mean(h, k) - exact.mean(h, k)) /
                        std::hypot(emp.se_mean(h, k), exact.se_mean(h, k));
      const double z2 = (emp.second(h, k) - exact.second(h, k)) /
                        std::hypot(emp.se_second(h, k), exact.se_second(h, k));
      std::printf("  %s dQ_%d%d: z(mean) = %+.2f, z(second moment) = %+.2f\n", engine, h, k, z1, z2);
      EXPECT_LT(std::abs(z1), 4) << engine << " E dQ_" << h << k << ": " << emp.mean(h, k) << " vs exact "
                                 << exact.mean(h, k);
      EXPECT_LT(std::abs(z2), 4) << engine << " E dQ_" << h << k << "^2: " << emp.second(h, k) << " vs exact "
                                 << exact.second(h, k);
    }
}

void check_one_step(const ModelSpec& model, const OrderParameters& op, int64_t D) {
  auto t0 = std::chrono::steady_clock::now();
  const Moments exact = exact_step_moments(model, op, D, 600000);

  GramEngine gram(model, D, 5);
  Accumulator gacc;
  for (uint64_t n = 0; n < 500000; ++n) {
    gram.set_state(op);
    ASSERT_LT((gram.order_parameters().Q - op.Q).norm(), 1e-12);
    gram.step(n);
    const Eigen::Matrix2d dQ = gram.order_parameters().Q - op.Q;
    gacc.add(dQ, dQ.cwiseProduct(dQ));
  }
  expect_moments_agree(exact, gacc.result(), "gram");

  // The dense engine's parallel loops are pure overhead at D = 10.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  DenseEngine dense(model, D, 6);
  std::vector<double> keys(2 * D, 0.0);
  const double sqrt_d = std::sqrt(static_cast<double>(D));
  const Eigen::MatrixXd chol = Eigen::LLT<Eigen::MatrixXd>(op.orthogonal()).matrixL();
  for (int h = 0; h < 2; ++h) {
    for (int f = 0; f < 2; ++f) keys[h * D + f] = sqrt_d * op.M(h, f);
    keys[h * D + 2] = sqrt_d * op.R[h];
    for (int j = 0; j < 2; ++j) keys[h * D + 3 + j] = sqrt_d * chol(h, j);
  }
  Accumulator dacc;
  for (uint64_t n = 0; n < 100000; ++n) {
    dense.keys() = keys;
    dense.readout() = op.c;
    dense.step(n);
    const Eigen::Matrix2d dQ = dense.order_parameters().Q - op.Q;
    dacc.add(dQ, dQ.cwiseProduct(dQ));
  }
  omp_set_num_threads(threads);
  expect_moments_agree(exact, dacc.result(), "dense");
  std::printf("  one step, 600k exact + 500k gram + 100k dense draws: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

// D = 10 with r = 5: the noise outside the frame lives in 5 dimensions, so its degrees of
// freedom and the Bartlett factor's entries change E ΔQ by many standard errors. The dense
// engine checks the derivation itself. 12 z-tests at |z| < 4 per state: a correct engine
// fails with probability below 10^-3 per state.
TEST(GramEngine, OneStepMomentsOfQMatchTheExactMoments) {
  const ModelSpec model = small_model();
  check_one_step(model, generic_state(), 10);
}

// Heads with large, weakly correlated orthogonal parts attend to different positions, so
// the rows of G are far from parallel and both columns of the out-of-frame factor matter;
// a large step (η = 10) and label noise (Δ = 4, a large residual) make the ε² G W Gᵀ term
// large against the drift −ε(G Sᵀ + S Gᵀ). A χ² with D − r + 1 degrees of freedom or a
// Bartlett factor without its off-diagonal normals fails here.
TEST(GramEngine, OneStepMomentsOfQWithDistinctHeadsAndLargeStep) {
  ModelSpec model = small_model();
  model.lr = 10;
  model.noise = 4;
  OrderParameters op = generic_state();
  op.M *= 0.3;
  op.R *= 0.3;
  Eigen::MatrixXd Qperp(2, 2);
  Qperp << 4.0, 0.2, 0.2, 3.0;
  op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + Qperp;
  check_one_step(model, op, 10);
}

// M(0), R(0) are the dense engine's numbers for the same seed; Q(0) has the dense law:
// Q_hh = q0 χ²(D)/D (mean q0, variance 2q0²/D), Q_12 has mean 0 and variance q0²/D.
TEST(GramEngine, InitialKeysHaveTheDenseLaw) {
  ModelSpec model = small_model();
  model.q0 = 1.7;
  const int64_t D = 20;
  for (uint32_t seed : {1u, 99u}) {
    const OrderParameters g = GramEngine(model, D, seed).order_parameters();
    const OrderParameters d = DenseEngine(model, D, seed).order_parameters();
    EXPECT_EQ(g.M, d.M);
    EXPECT_EQ(g.R, d.R);
  }
  const int n = 20000;
  double s11 = 0, s11sq = 0, s12 = 0, s12sq = 0;
  for (int s = 0; s < n; ++s) {
    const Eigen::MatrixXd Q = GramEngine(model, D, 1000 + s).order_parameters().Q;
    s11 += Q(0, 0);
    s11sq += Q(0, 0) * Q(0, 0);
    s12 += Q(0, 1);
    s12sq += Q(0, 1) * Q(0, 1);
  }
  const double q0 = model.q0, m11 = s11 / n, v11 = s11sq / n - m11 * m11, m12 = s12 / n, v12 = s12sq / n - m12 * m12;
  EXPECT_LT(std::abs(m11 - q0) / std::sqrt(2 * q0 * q0 / D / n), 4);
  EXPECT_LT(std::abs(m12) / std::sqrt(q0 * q0 / D / n), 4);
  // Var of the sample variance: (μ4 − σ⁴)/n with μ4 = 12k² + 48k for χ²(k) scaled by (q0/D)².
  const double var11 = 2 * q0 * q0 / D, mu4_11 = (12.0 * D * D + 48.0 * D) * std::pow(q0 / D, 4);
  EXPECT_LT(std::abs(v11 - var11) / std::sqrt((mu4_11 - var11 * var11) / n), 4);
  const double var12 = q0 * q0 / D, mu4_12 = (3.0 * D * D + 6.0 * D) * std::pow(q0 / D, 4);
  EXPECT_LT(std::abs(v12 - var12) / std::sqrt((mu4_12 - var12 * var12) / n), 4);
}

namespace {
// Structural invariants of the state: κ's frame block is lower triangular with a
// non-negative diagonal (the coordinates of H keys in an orthonormal frame built by QR), and
// Q = κκᵀ is symmetric positive semi-definite with Q⊥ = κ_⊥κ_⊥ᵀ.
void expect_invariants(const GramEngine& e) {
  const RowMatrix& kappa = e.coordinates();
  const int H = static_cast<int>(kappa.rows()), r = static_cast<int>(kappa.cols());
  const auto frame = kappa.rightCols(H);
  ASSERT_TRUE(kappa.allFinite());
  for (int j = 0; j < H; ++j) {
    EXPECT_GE(frame(j, j), 0.0);
    for (int h = 0; h < j; ++h) EXPECT_EQ(frame(h, j), 0.0);
  }
  const OrderParameters op = e.order_parameters();
  EXPECT_EQ(op.Q, op.Q.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(op.Q);
  EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-14 * eig.eigenvalues().cwiseAbs().maxCoeff());
  const Eigen::MatrixXd perp = frame * frame.transpose();
  EXPECT_LT((op.orthogonal() - perp).norm(), 1e-12 * (1 + op.Q.norm())) << "r = " << r;
}
}  // namespace

// 10^6 steps (t = 100 at D = 10^4): the state keeps its invariants and stays finite.
TEST(GramEngine, LongRunKeepsTheFrameAndQPositive) {
  ModelSpec model = small_model();
  model.L = 5;
  const int64_t D = 10000;
  GramEngine e(model, D, 3);
  for (uint64_t n = 0; n < 1000000; ++n) e.step(n);
  expect_invariants(e);
  // Both heads learned the constant direction (M ≈ 1.8 at t = 100 in dense runs at D = 10^3).
  const OrderParameters op = e.order_parameters();
  EXPECT_GT(op.M(0, 0), 1.0);
  EXPECT_GT(op.M(1, 0), 1.0);
}

// Two identical heads receive identical updates (same scores, same Jacobian rows), so the
// dense dynamics keep them identical; the reduced engine must too, with a rank-one frame
// block padded by QR, up to rounding. The symmetric state is unstable here (a difference
// grows like e^{0.26 t}: from 10^-16 to O(1) by t ≈ 150), so rounding-level asymmetry is
// what a correct engine shows at t = 20, and 10^-8 (a square root of a rounding error in a
// factorisation) would be a defect. A head at zero must move off zero without NaN.
TEST(GramEngine, DegenerateKeysStayExactAndFinite) {
  ModelSpec model = small_model();
  model.readout = Readout::Sum;
  model.prior = Prior::spike(Eigen::VectorXd::Constant(1, 2.0));
  const int64_t D = 1000;
  OrderParameters op;
  op.M = Eigen::MatrixXd::Constant(2, 1, 0.3);
  op.R = Eigen::VectorXd::Constant(2, 0.05);
  op.Q = Eigen::MatrixXd::Constant(2, 2, 1.0);  // k_1 = k_2
  op.c = Eigen::VectorXd::Ones(2);
  GramEngine same(model, D, 4);
  same.set_state(op);
  for (uint64_t n = 0; n < 20000; ++n) same.step(n);
  expect_invariants(same);
  const OrderParameters s = same.order_parameters();
  EXPECT_NEAR(s.M(0, 0), s.M(1, 0), 1e-12);
  EXPECT_NEAR(s.Q(0, 0), s.Q(0, 1), 1e-12 * s.Q(0, 0));
  EXPECT_NEAR(s.Q(1, 1), s.Q(0, 1), 1e-12 * s.Q(0, 0));
  EXPECT_GT(s.M(0, 0), 0.6);  // the common key learned the spike

  op.M(0, 0) = 0;
  op.R[0] = 0;
  op.Q << 0, 0, 0, 1.0;  // k_1 = 0
  GramEngine zero(model, D, 4);
  zero.set_state(op);
  zero.step(0);
  expect_invariants(zero);
  EXPECT_GT(zero.order_parameters().Q(0, 0), 0.0);
  for (uint64_t n = 1; n < 100000; ++n) zero.step(n);
  expect_invariants(zero);
}
