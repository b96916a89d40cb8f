// The batched kernel (AttentionKernelBatch, several samples per SIMD register) against the
// one-sample-at-a-time AttentionKernel it replaced, lane by lane.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "headspec/kernel.hpp"

using namespace headspec;

namespace {

constexpr int kLanes = AttentionKernelBatch::kLanes;
using Lanes = AttentionKernelBatch::Lanes;

// |x − ref| within a few ulps of the larger terms: only the exponential (exp_nonpositive
// against std::exp), the normalisation (one reciprocal per row) and the order of some sums differ.
void expect_close(double x, double ref, double scale, const std::string& what) {
  EXPECT_NEAR(x, ref, 1e-13 * (scale + std::abs(ref))) << what;
}

TEST(KernelBatch, ExpWithinOneUlpOfStdExp) {
  double worst = 0;
  for (int i = 0; i < 40000; ++i) {
    Lanes x;
    for (int j = 0; j < kLanes; ++j) x[j] = -708.0 * (i * kLanes + j) / (40000.0 * kLanes);
    const Lanes y = AttentionKernelBatch::exp_nonpositive(x);
    for (int j = 0; j < kLanes; ++j) {
      const double ref = std::exp(x[j]);
      worst = std::max(worst, std::abs(y[j] - ref) / (std::nextafter(ref, INFINITY) - ref));
    }
  }
  EXPECT_LE(worst, 1.0);
  Lanes special = Lanes::Zero();
  special[1] = -1e-300;
  special[2] = -750.0;
  special[3] = -INFINITY;
  special[4] = NAN;
  const Lanes y = AttentionKernelBatch::exp_nonpositive(special);
  EXPECT_EQ(y[0], 1.0);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_NEAR(y[2], std::exp(-708.0), 1e-322);  // clamped, not a subnormal
  EXPECT_NEAR(y[3], std::exp(-708.0), 1e-322);
  EXPECT_TRUE(std::isnan(y[4]));
}

TEST(KernelBatch, MatchesScalarKernelLaneByLane) {
  const int H = 3, L = 7;
  std::mt19937_64 gen(11);
  std::normal_distribution<double> nd(0.0, 3.0);
  for (Activation act : all_activations()) {
    Eigen::VectorXd c(H);
    c << 0.7, -0.4, 1.3;
    std::vector<Lanes> S(H * L), g(L), v(L);
    for (auto* x : {&S, &g, &v})
      for (Lanes& y : *x)
        for (int j = 0; j < kLanes; ++j) y[j] = nd(gen);
    S[0][0] = 800.0;  // one huge score: log-sum-exp must keep it finite
    AttentionKernelBatch batch(act, H, L);
    batch.forward(S.data(), g.data(), c);
    std::vector<Lanes> Jb(H * L), gramb(H * (H + 1) / 2);
    batch.apply_jacobian(v.data(), Jb.data());
    batch.jacobian_gram(gramb.data());
    for (int j = 0; j < kLanes; ++j) {
      RowMatrix Sj(H, L);
      Eigen::VectorXd gj(L), vj(L);
      for (int h = 0; h < H; ++h)
        for (int l = 0; l < L; ++l) Sj(h, l) = S[h * L + l][j];
      for (int l = 0; l < L; ++l) gj[l] = g[l][j], vj[l] = v[l][j];
      AttentionKernel ref(act, H, L);
      ref.forward(Sj, gj, c);
      RowMatrix Jr;
      Eigen::MatrixXd gramr;
      ref.apply_jacobian(vj, Jr);
      ref.jacobian_gram(gramr);
      const std::string tag = std::string(to_string(act)) + " lane " + std::to_string(j);
      for (int h = 0; h < H; ++h) {
        for (int l = 0; l < L; ++l) {
          expect_close(batch.attention()[h * L + l][j], ref.attention()(h, l), 1.0, tag + " A");
          expect_close(Jb[h * L + l][j], Jr(h, l), 1.0, tag + " Phi v");
        }
        expect_close(batch.head_outputs()[h][j], ref.head_outputs()[h], 1.0, tag + " o");
      }
      for (int l = 0; l < L; ++l)
        expect_close(batch.position_weights()[l][j], ref.position_weights()[l], 1.0, tag + " a");
      expect_close(batch.output()[j], ref.output(), 1.0, tag + " yhat");
      int q = 0;
      for (int h = 0; h < H; ++h)
        for (int hp = h; hp < H; ++hp, ++q) expect_close(gramb[q][j], gramr(h, hp), 1.0, tag + " gram");
    }
  }
}

}  // namespace
