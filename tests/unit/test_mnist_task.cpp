// The MNIST task data (docs/model.md §11): centred, normalised digits and class means, on a
// package-shaped fixture made here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/mnist_data.hpp"
#include "mnist_fixture.hpp"

using namespace headspec;
using headspec::testing::any_package;
using headspec::testing::fresh_dir;
using headspec::testing::make_mnist_fixture;
namespace fs = std::filesystem;

// p̂ has unit norm and is the digit minus the mean training image, rescaled; û_c likewise
// from the class means (docs/model.md §11), recomputed here pixel by pixel.
TEST(MnistTask, CentresAndNormalisesDigitsAndClassMeans) {
  const auto dir = fresh_dir("mnist_task");
  make_mnist_fixture(dir, 6);
  const MnistDigits d = load_mnist(dir.string(), any_package());
  const MnistSplit split = split_mnist(d, 0.5, 1);
  const MnistTask task = MnistTask::build(d, split);
  ASSERT_EQ(task.n_train(), static_cast<int>(split.train.size()));
  ASSERT_EQ(task.n_test(), static_cast<int>(split.test.size()));
  std::vector<double> mean(kMnistPixels, 0.0);
  for (int i : split.train)
    for (int p = 0; p < kMnistPixels; ++p) mean[p] += d.milli[i * kMnistPixels + p] / 1000.0 / split.train.size();
  for (int p = 0; p < kMnistPixels; ++p) ASSERT_NEAR(task.mean_image[p], mean[p], 1e-12);
  for (int k = 0; k < task.n_test(); ++k) {
    const int i = split.test[k];
    double n2 = 0, scale = 0;
    for (int p = 0; p < kMnistPixels; ++p) n2 += std::pow(d.milli[i * kMnistPixels + p] / 1000.0 - mean[p], 2);
    scale = 1 / std::sqrt(n2);
    for (int p = 0; p < kMnistPixels; ++p)
      ASSERT_NEAR(task.test_digit(k)[p], (d.milli[i * kMnistPixels + p] / 1000.0 - mean[p]) * scale, 1e-12);
    ASSERT_EQ(task.test_label[k], d.label[i]);
  }
  for (int c = 0; c < kMnistClasses; ++c) {
    std::vector<double> cm(kMnistPixels, 0.0);
    int n = 0;
    for (int i : split.train)
      if (d.label[i] == c) {
        ++n;
        for (int p = 0; p < kMnistPixels; ++p) cm[p] += d.milli[i * kMnistPixels + p] / 1000.0;
      }
    double n2 = 0;
    for (int p = 0; p < kMnistPixels; ++p) n2 += std::pow(cm[p] / n - mean[p], 2);
    for (int p = 0; p < kMnistPixels; ++p)
      ASSERT_NEAR(task.direction(c)[p], (cm[p] / n - mean[p]) / std::sqrt(n2), 1e-12) << "class " << c;
  }
  fs::remove_all(dir);
}
