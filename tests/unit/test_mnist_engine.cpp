// The MNIST engine (docs/model.md §11): its test error against an explicit token-level Monte
// Carlo, its SGD step against finite differences of the per-sample loss, and reproducibility.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <algorithm>
#include <array>
#include <random>

#include "cli_helpers.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/random.hpp"
#include "mnist_fixture.hpp"
#include "mnist_model.hpp"

using namespace headspec;
using headspec::testing::small_model;
namespace fs = std::filesystem;

namespace {

constexpr int64_t D = kMnistPixels;

// The task of a small synthetic package (made once per process).
const MnistTask& fixture_task() {
  static const MnistTask task = [] {
    const auto dir = headspec::testing::fresh_dir("mnist_engine_fixture");
    headspec::testing::make_mnist_fixture(dir, 12);
    MnistLoadOptions o;
    o.expected_sha256.clear();
    o.write_cache = false;
    const MnistDigits d = load_mnist(dir.string(), o);
    fs::remove_all(dir);
    return MnistTask::build(d, split_mnist(d, 0.75, 1));
  }();
  return task;
}


// The error of the engine's keys on test digits, by drawing every token in R^784 (no use
// of the Gaussian shortcut of test_error): z ~ N(0, I), x_ℓ* = z_ℓ* + √ν p̂.
MeanEstimate token_level_error(const MnistEngine& e, int samples, unsigned seed) {
  const MnistTask& task = fixture_task();
  const int H = e.model().H, L = e.model().L;
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  AttentionKernel kernel(e.model().activation, H, L);
  RowMatrix S(H, L);
  Eigen::VectorXd g(L);
  std::vector<double> x(D);
  double sum = 0, sum2 = 0;
  for (int n = 0; n < samples; ++n) {
    const int lstar = static_cast<int>(gen() % L);
    const double* p = task.test_digit(static_cast<int>(gen() % task.n_test()));
    for (int l = 0; l < L; ++l) {
      for (int64_t d = 0; d < D; ++d) x[d] = normal(gen) + (l == lstar ? std::sqrt(e.nu()) * p[d] : 0.0);
      for (int h = 0; h <= H; ++h) {
        const double* k = h < H ? e.keys().data() + h * D : e.value_direction().data();
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += k[d] * x[d];
        (h < H ? S(h, l) : g[l]) = dot / std::sqrt(double(D));
      }
    }
    kernel.forward(S, g, e.readout());
    const double err = std::pow(kernel.output() - g[lstar], 2);
    sum += err;
    sum2 += err * err;
  }
  const double mean = sum / samples;
  return {mean, std::sqrt((sum2 / samples - mean * mean) / (samples - 1))};
}

}  // namespace

// test_error draws the noise through the scores' exact Gaussian law; an explicit token-level
// Monte Carlo must agree, for keys that attend (along class directions, with either sign) and for
// each activation.
TEST(MnistEngine, TestErrorMatchesTokenLevelMonteCarlo) {
  const MnistTask& task = fixture_task();
  for (Activation a : all_activations()) {
    const ModelSpec model = small_model(a, 2, 4);
    MnistEngine e(task, model, 25.0, 5);
    for (int64_t d = 0; d < D; ++d) {
      e.keys()[d] = 0.5 * e.keys()[d] + 2 * std::sqrt(double(D)) * (task.direction(3)[d] + task.direction(8)[d]);
      e.keys()[D + d] = 0.5 * e.keys()[D + d] - 2 * std::sqrt(double(D)) * task.direction(5)[d];
    }
    // Few test digits: sample n of test_error uses digit n mod n_test, so use every one.
    const int samples = task.n_test() * 60;
    const MeanEstimate fast = e.test_error(samples);
    const MeanEstimate slow = token_level_error(e, 3000, 11);
    EXPECT_NEAR(fast.mean, slow.mean, 4 * std::hypot(fast.stderr_, slow.stderr_)) << to_string(a);
    EXPECT_EQ(e.test_error(samples).mean, fast.mean) << "the same test samples at every call";
  }
}

// With the linear activation the test error has a closed form: for ℓ ≠ ℓ*, (u, g) = (c·s_ℓ,
// g_ℓ) is a centred Gaussian pair (variances σ² = cᵀQc and γ = |v*|²/D, covariance ρ = c·R);
// at ℓ* both are shifted by the digit's a = √ν c·Kp̂/√D and b = √ν v*·p̂/√D. With m = a − 1,
//   E r² = σ²γ + 2ρ² + b²σ² + 4mbρ + m²γ + m²b² + 2(L−1)ρ(ρ + mb) + (L−1)(σ²γ + 2ρ²) + (L−1)(L−2)ρ²,
// averaged over the test digits. A sharp check of the shortcut's covariance and spike terms.
TEST(MnistEngine, TestErrorOfLinearAttentionMatchesItsClosedForm) {
  const MnistTask& task = fixture_task();
  ModelSpec model = small_model(Activation::Linear, 2, 3);
  model.readout = Readout::Sum;
  const double nu = 400;  // strong spikes, short keys: the spike terms dominate
  MnistEngine e(task, model, nu, 21);
  for (int64_t d = 0; d < D; ++d) {
    e.keys()[d] = 0.05 * e.keys()[d] + 0.2 * std::sqrt(double(D)) * task.direction(2)[d];
    e.keys()[D + d] = 0.05 * e.keys()[D + d] - 0.2 * std::sqrt(double(D)) * task.direction(7)[d] +
                      0.1 * e.value_direction()[d];
  }
  const OrderParameters op = e.order_parameters();
  const double sigma2 = op.Q.sum(), rho = op.R.sum(), L = model.L;
  double gamma = 0;
  for (double v : e.value_direction()) gamma += v * v / D;
  double exact = 0;
  for (int i = 0; i < task.n_test(); ++i) {
    double a = 0, b = 0;
    for (int64_t d = 0; d < D; ++d) {
      a += (e.keys()[d] + e.keys()[D + d]) * task.test_digit(i)[d];
      b += e.value_direction()[d] * task.test_digit(i)[d];
    }
    a *= std::sqrt(nu / D);
    b *= std::sqrt(nu / D);
    const double m = a - 1;
    exact += sigma2 * gamma + 2 * rho * rho + b * b * sigma2 + 4 * m * b * rho + m * m * gamma + m * m * b * b +
             2 * (L - 1) * rho * (rho + m * b) + (L - 1) * (sigma2 * gamma + 2 * rho * rho) + (L - 1) * (L - 2) * rho * rho;
  }
  exact /= task.n_test();
  const MeanEstimate mc = e.test_error(task.n_test() * 2000);
  EXPECT_NEAR(mc.mean, exact, 4 * mc.stderr_);
  EXPECT_LT(mc.stderr_, 0.02 * exact) << "the check must be sharp";
}

// Fewer test samples than test digits still cover every class in proportion (the test set
// is ordered by class); as many or more use every digit in turn.
TEST(MnistEngine, TestSamplesCoverEveryClass) {
  const MnistTask& task = fixture_task();
  const int n_test = task.n_test();
  for (int samples : {10, n_test / 2, n_test - 1}) {
    const auto digits = MnistEngine::test_digits(samples, n_test);
    ASSERT_EQ(static_cast<int>(digits.size()), samples);
    std::array<int, kMnistClasses> per_class{}, total{};
    for (int i : digits) ++per_class[task.test_label[i]];
    for (int l : task.test_label) ++total[l];
    for (int c = 0; c < kMnistClasses; ++c)
      EXPECT_NEAR(per_class[c], double(total[c]) * samples / n_test, 1.0) << "class " << c << ", " << samples << " samples";
    EXPECT_TRUE(std::is_sorted(digits.begin(), digits.end()));
    EXPECT_EQ(std::adjacent_find(digits.begin(), digits.end()), digits.end()) << "no digit twice";
  }
  const auto all = MnistEngine::test_digits(3 * n_test, n_test);
  ASSERT_EQ(static_cast<int>(all.size()), n_test);
  for (int k = 0; k < n_test; ++k) EXPECT_EQ(all[k], k);
}

// One SGD step moves the keys by −η ∇ of ½(ŷ − y)² for the step's sample; the sample is
// rebuilt from the documented stream layout and the gradient taken by central differences.
TEST(MnistEngine, StepIsMinusLearningRateTimesTheLossGradient) {
  const MnistTask& task = fixture_task();
  for (Activation a : {Activation::Softmax, Activation::BayesSoftmax}) {
    ModelSpec model = small_model(a, 2, 3);
    model.lr = 0.7;
    model.readout = Readout::Sum;
    const double nu = 16;
    const uint32_t seed = 9;
    const uint64_t n = 5;
    MnistEngine e(task, model, nu, seed);
    for (int64_t d = 0; d < D; ++d) e.keys()[D + d] += 2 * std::sqrt(double(D)) * task.direction(1)[d];
    const std::vector<double> before = e.keys();
    e.step(n);

    // The sample of step n: ℓ*, digit from lane L; token ℓ's noise from lane ℓ.
    RandomStream scalars(StreamId{seed, Purpose::Train, static_cast<uint32_t>(model.L), n});
    const int lstar = static_cast<int>(scalars.below(model.L));
    const double* p = task.train_digit(static_cast<int>(scalars.below(task.n_train())));
    std::vector<double> x(model.L * D);
    for (int l = 0; l < model.L; ++l) {
      fill_normal(StreamId{seed, Purpose::Train, static_cast<uint32_t>(l), n}, 0, x.data() + l * D, D);
      if (l == lstar)
        for (int64_t d = 0; d < D; ++d) x[l * D + d] += std::sqrt(nu) * p[d];
    }
    auto loss = [&](const std::vector<double>& keys) {
      RowMatrix S(model.H, model.L);
      Eigen::VectorXd g(model.L);
      for (int l = 0; l < model.L; ++l) {
        for (int h = 0; h <= model.H; ++h) {
          const double* k = h < model.H ? keys.data() + h * D : e.value_direction().data();
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += k[d] * x[l * D + d];
          (h < model.H ? S(h, l) : g[l]) = dot / std::sqrt(double(D));
        }
      }
      AttentionKernel k(model.activation, model.H, model.L);
      k.forward(S, g, e.readout());
      return 0.5 * std::pow(k.output() - g[lstar], 2);
    };
    // Directional derivatives along a few random directions.
    std::mt19937_64 gen(3);
    std::normal_distribution<double> normal;
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<double> dir(before.size()), plus = before, minus = before;
      const double eps = 1e-4;
      double moved = 0;
      for (std::size_t i = 0; i < dir.size(); ++i) {
        dir[i] = normal(gen);
        plus[i] += eps * dir[i];
        minus[i] -= eps * dir[i];
        moved += (e.keys()[i] - before[i]) * dir[i];
      }
      const double fd = (loss(plus) - loss(minus)) / (2 * eps);
      EXPECT_NEAR(moved, -model.lr * fd, 1e-6 * (1 + std::abs(fd))) << to_string(a);
    }
  }
}

namespace {

// A short study of the fixture's task: records at t = 0, 0.25, 0.5.
MnistStudySpec short_study(int runs, int test_samples) {
  MnistStudySpec spec;
  spec.nu = 9;
  spec.sim.T = 0.5;
  spec.sim.record_every = 0.25;
  spec.sim.test_samples = test_samples;
  spec.sim.runs = runs;
  return spec;
}

}  // namespace

// Same seed, same numbers, whatever the number of threads; another seed, other numbers.
TEST(MnistEngine, RunsAreReproducibleAcrossThreadCounts) {
  const MnistTask& task = fixture_task();
  const ModelSpec model = small_model(Activation::Softmax, 2, 4);
  const MnistStudySpec spec = short_study(3, 50);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run_mnist(task, model, spec);
  omp_set_num_threads(2);
  const auto two = run_mnist(task, model, spec);
  omp_set_num_threads(threads);
  for (int r = 0; r < spec.sim.runs; ++r) {
    EXPECT_EQ(one[r].keys, two[r].keys) << "run " << r;
    ASSERT_EQ(one[r].trajectory.records.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(one[r].trajectory.records[k].loss, two[r].trajectory.records[k].loss);
  }
  EXPECT_NE(one[0].keys, one[1].keys);
}

// Eigen blocks its products by the cache sizes it reads from the processor, which would
// make the error and the overlaps (products over D = 784) differ in their last bits from
// one machine to another; the engine fixes the sizes (include/headspec/eigen_blocking.hpp).
// Here the sizes of two processors are set before each run: the bits must not change.
TEST(MnistEngine, RunsDoNotDependOnTheCacheSizesEigenFinds) {
  const MnistTask& task = fixture_task();
  const ModelSpec model = small_model(Activation::Softmax, 3, 4);
  const MnistStudySpec spec = short_study(1, 200);
  const std::ptrdiff_t l1 = Eigen::l1CacheSize(), l2 = Eigen::l2CacheSize(), l3 = Eigen::l3CacheSize();
  Eigen::setCpuCacheSizes(48 * 1024, 1280 * 1024, 24 << 20);  // a 48 KiB-L1 processor
  const auto first = run_mnist(task, model, spec);
  Eigen::setCpuCacheSizes(16 * 1024, 512 * 1024, 512 * 1024);  // Eigen's sizes when it finds none
  const auto second = run_mnist(task, model, spec);
  Eigen::setCpuCacheSizes(l1, l2, l3);
  ASSERT_EQ(first[0].trajectory.records.size(), second[0].trajectory.records.size());
  for (std::size_t k = 0; k < first[0].trajectory.records.size(); ++k) {
    const auto& a = first[0].trajectory.records[k];
    const auto& b = second[0].trajectory.records[k];
    EXPECT_EQ(a.loss, b.loss) << "record " << k;
    EXPECT_TRUE(a.op.M == b.op.M && a.op.Q == b.op.Q) << "record " << k;
  }
}
