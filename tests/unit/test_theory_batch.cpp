// The theory engine's batched right-hand side against a reference that redraws every sample
// from its stream and runs it through the scalar AttentionKernel (docs/model.md §6–7).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "headspec/kernel.hpp"
#include "headspec/projection.hpp"
#include "headspec/random.hpp"
#include "headspec/theory_engine.hpp"

using namespace headspec;

namespace {

// The right-hand side as the engine computed it before batching: one sample at a time
// from its own stream (TheoryEngine::draw_sample's order), through AttentionKernel.
TheoryEvaluation reference_rhs(const ModelSpec& m, const TheoryOptions& o, const OrderParameters& op, uint64_t draw) {
  const int H = m.H, L = m.L, F = m.F(), K = F + H, stride = K + 1;
  const int width = F + L * stride + 1;
  const bool sampled = o.channel == ValueChannel::Sampled;
  OrderParameters used = op;
  if (!sampled) used.R.setZero();
  const Eigen::MatrixXd C = ProjectionSampler(m, used).orthogonal_sqrt();
  const StateLayout layout(H, F, m.readout == Readout::Learned);
  const std::size_t dim = layout.size();
  std::vector<double> sum(dim + 1, 0.0), sq(dim + 1, 0.0), out(dim + 1), z(width);
  AttentionKernel kernel(m.activation, H, L);
  RowMatrix S(H, L), J;
  Eigen::VectorXd g(L), e = Eigen::VectorXd::Zero(L);
  Eigen::MatrixXd gram;
  const double drift = m.lr / m.batch, noise = m.lr * m.lr / (m.batch * m.batch), cdrift = m.readout_lr / m.batch;
  for (int64_t n = 0; n < o.samples; ++n) {
    RandomStream rng(
        StreamId{o.seed, Purpose::MonteCarlo, static_cast<uint32_t>(n), o.mode == MonteCarloMode::Fixed ? 0 : draw});
    m.prior.sample(rng, z.data());
    for (int i = F; i < width; ++i) z[i] = rng.normal();
    for (int f = 0; f < F; ++f) z[F + f] += z[f];
    const double* lam = z.data() + F;
    for (int l = 0; l < L; ++l) {
      g[l] = sampled ? lam[l * stride + K] : 0.0;
      for (int h = 0; h < H; ++h) {
        double s = used.R[h] * g[l];
        for (int f = 0; f < F; ++f) s += op.M(h, f) * lam[l * stride + f];
        for (int k = 0; k < H; ++k) s += C(h, k) * lam[l * stride + F + k];
        S(h, l) = s;
      }
    }
    kernel.forward(S, g, op.c);
    double scale = 1.0, r = 0.0, e2 = 0.0;
    if (sampled) {
      r = kernel.output() - (g[0] + std::sqrt(m.noise) * z[width - 1]);
      scale = r;
      kernel.apply_jacobian(g, J);
    } else {
      e = kernel.position_weights();
      e[0] -= 1.0;
      e2 = e.squaredNorm() + m.noise;
      kernel.apply_jacobian(e, J);
      kernel.jacobian_gram(gram);
    }
    for (int h = 0; h < H; ++h) {
      for (int f = 0; f < F; ++f) {
        double acc = 0;
        for (int l = 0; l < L; ++l) acc += J(h, l) * lam[l * stride + f];
        out[layout.m_index(h, f)] = -drift * scale * acc;
      }
      double acc = 0;
      for (int l = 0; l < L; ++l) acc += J(h, l) * g[l];
      out[layout.r_index(h)] = -drift * r * acc;
      for (int hp = h; hp < H; ++hp) {
        double d = 0, jj = 0;
        for (int l = 0; l < L; ++l) d += J(h, l) * S(hp, l) + J(hp, l) * S(h, l), jj += J(h, l) * J(hp, l);
        out[layout.q_index(h, hp)] =
            -drift * scale * d + (sampled ? noise * r * r * jj : noise * (e2 * gram(h, hp) + 2.0 * jj));
      }
      if (layout.learned_readout()) {
        double ea = 0;
        for (int l = 0; l < L; ++l) ea += e[l] * kernel.attention()(h, l);
        out[layout.c_index(h)] = sampled ? -cdrift * r * kernel.head_outputs()[h] : -cdrift * ea;
      }
    }
    out[dim] = sampled ? r * r : e2;
    for (std::size_t i = 0; i <= dim; ++i) sum[i] += out[i], sq[i] += out[i] * out[i];
  }
  TheoryEvaluation ev;
  const double nn = static_cast<double>(o.samples);
  auto se = [&](std::size_t i) {
    const double mean = sum[i] / nn;
    return std::sqrt(std::max((sq[i] - nn * mean * mean) / (nn - 1), 0.0) / nn);
  };
  for (std::size_t i = 0; i < dim; ++i) ev.rate.push_back(sum[i] / nn), ev.rate_stderr.push_back(se(i));
  ev.error = sum[dim] / nn;
  ev.error_stderr = se(dim);
  return ev;
}

TEST(TheoryBatch, SameRightHandSideAsOneSampleAtATime) {
  for (Activation act : all_activations())
    for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled})
      for (MonteCarloMode mode : {MonteCarloMode::Fixed, MonteCarloMode::Resample}) {
        ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, learned readout
        m.activation = act;
        m.noise = 0.2;
        if (act == Activation::Linear) m.readout = Readout::Mean;  // also a fixed readout
        OrderParameters op;
        op.M.resize(2, 2);
        op.M << 0.9, 0.4, 0.6, -0.5;
        op.R = Eigen::VectorXd::Zero(2);
        if (channel == ValueChannel::Sampled) op.R << 0.3, -0.2;
        Eigen::Matrix2d ortho;
        ortho << 0.8, 0.2, 0.2, 0.6;
        op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + ortho;
        op.c = m.initial_readout();
        if (m.readout == Readout::Learned) op.c << 0.7, 0.4;
        TheoryOptions o;
        o.samples = 2050;  // 9 blocks (a parallel evaluation), the last one partial, ending mid-batch
        o.channel = channel;
        o.mode = mode;
        o.seed = 3;
        TheoryEvaluation ev;
        TheoryEngine(m, o).evaluate(op, 2, ev);
        const TheoryEvaluation ref = reference_rhs(m, o, op, 2);
        const std::string tag = std::string(to_string(act)) +
                                (channel == ValueChannel::Sampled ? " sampled" : " integrated") +
                                (mode == MonteCarloMode::Fixed ? " fixed" : " resample");
        ASSERT_EQ(ev.rate.size(), ref.rate.size()) << tag;
        double scale = std::abs(ref.error);
        for (double x : ref.rate) scale = std::max(scale, std::abs(x));
        for (std::size_t i = 0; i < ref.rate.size(); ++i) {
          EXPECT_NEAR(ev.rate[i], ref.rate[i], 1e-12 * scale) << tag << " entry " << i;
          EXPECT_NEAR(ev.rate_stderr[i], ref.rate_stderr[i], 1e-9 * ref.rate_stderr[i] + 1e-15)
              << tag << " entry " << i;
        }
        EXPECT_NEAR(ev.error, ref.error, 1e-12 * scale) << tag;
        EXPECT_NEAR(ev.error_stderr, ref.error_stderr, 1e-9 * ref.error_stderr) << tag;
      }
}

// The fused softmax pass has its sizes fixed at compile time for H = 2, F = 2 and L = 10 or
// 5 (the second checked here); other sizes read them at run time (and beyond its capacities
// take the kernel's path). Both value channels, against the same one-sample-at-a-time
// reference.
TEST(TheoryBatch, SameRightHandSideAtOtherSizes) {
  struct Size {
    int H, L;
    Eigen::VectorXd nu;
    Readout readout;
  };
  const std::vector<Size> sizes = {{2, 5, Eigen::Vector2d(2.0, 2.0), Readout::Learned},  // fixed sizes
                                   {3, 5, Eigen::Vector3d(8.0, 2.0, 1.0), Readout::Learned},
                                   {1, 4, Eigen::Vector2d(2.0, 2.0), Readout::Sum},
                                   {2, 20, Eigen::Vector2d(2.0, 2.0), Readout::Learned}};  // L beyond the capacity
  for (const Size& size : sizes)
    for (Activation act : {Activation::Softmax, Activation::Softmax1})
      for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled}) {
        ModelSpec m;
        m.H = size.H;
        m.L = size.L;
        m.prior = Prior::gauss(size.nu);
        m.readout = size.readout;
        m.activation = act;
        m.noise = 0.2;
        const int H = m.H, F = m.F();
        std::mt19937_64 gen(7);
        std::normal_distribution<double> nd(0.0, 0.5);
        OrderParameters op;
        op.M.resize(H, F);
        for (int h = 0; h < H; ++h)
          for (int f = 0; f < F; ++f) op.M(h, f) = nd(gen);
        op.R = Eigen::VectorXd::Zero(H);
        if (channel == ValueChannel::Sampled)
          for (int h = 0; h < H; ++h) op.R[h] = 0.3 - 0.2 * h;
        Eigen::MatrixXd B(H, H);
        for (int h = 0; h < H; ++h)
          for (int g = 0; g < H; ++g) B(h, g) = nd(gen);
        op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + B * B.transpose() +
               0.3 * Eigen::MatrixXd::Identity(H, H);
        op.c = m.initial_readout();
        if (m.readout == Readout::Learned)
          for (int h = 0; h < H; ++h) op.c[h] = 0.4 + 0.2 * h;
        TheoryOptions o;
        o.samples = 1030;  // 5 blocks, the last one partial, ending mid-batch
        o.seed = 4;
        o.channel = channel;
        TheoryEvaluation ev;
        TheoryEngine(m, o).evaluate(op, 0, ev);
        const TheoryEvaluation ref = reference_rhs(m, o, op, 0);
        const std::string tag = std::string(to_string(act)) + " H=" + std::to_string(H) + " L=" + std::to_string(m.L) +
                                (channel == ValueChannel::Sampled ? " sampled" : " integrated");
        ASSERT_EQ(ev.rate.size(), ref.rate.size()) << tag;
        double scale = std::abs(ref.error);
        for (double x : ref.rate) scale = std::max(scale, std::abs(x));
        for (std::size_t i = 0; i < ref.rate.size(); ++i) {
          EXPECT_NEAR(ev.rate[i], ref.rate[i], 1e-12 * scale) << tag << " entry " << i;
          EXPECT_NEAR(ev.rate_stderr[i], ref.rate_stderr[i], 1e-9 * ref.rate_stderr[i] + 1e-15)
              << tag << " entry " << i;
        }
        EXPECT_NEAR(ev.error, ref.error, 1e-12 * scale) << tag;
        EXPECT_NEAR(ev.error_stderr, ref.error_stderr, 1e-9 * ref.error_stderr) << tag;
      }
}

}  // namespace
