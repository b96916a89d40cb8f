// The MNIST task's data (docs/model.md §11): split, centring, normalisation, class directions.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "headspec/errors.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/random.hpp"

namespace headspec {

MnistSplit split_mnist(const MnistDigits& digits, double train_fraction, uint32_t seed) {
  if (!(train_fraction > 0 && train_fraction < 1))
    throw ParameterError("train-fraction", fmt::format("must be in (0, 1), got {}", train_fraction));
  MnistSplit split;
  int first = 0;
  for (int c = 0; c < kMnistClasses; ++c) {
    const int n = digits.count[c];
    if (n < 2) throw UsageError(fmt::format("MNIST: class {} has {} digits; a split needs at least 2", c, n));
    std::vector<int> idx(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) idx[i] = first + i;
    // Fisher–Yates with the class's own stream: the split of one class does not depend
    // on the sizes of the others.
    RandomStream rng(StreamId{seed, Purpose::Data, static_cast<uint32_t>(c), 0});
    for (int i = n - 1; i > 0; --i) std::swap(idx[i], idx[rng.below(static_cast<uint32_t>(i + 1))]);
    const int n_train = std::clamp(static_cast<int>(std::lround(train_fraction * n)), 1, n - 1);
    std::sort(idx.begin(), idx.begin() + n_train);
    std::sort(idx.begin() + n_train, idx.end());
    split.train.insert(split.train.end(), idx.begin(), idx.begin() + n_train);
    split.test.insert(split.test.end(), idx.begin() + n_train, idx.end());
    first += n;
  }
  return split;
}

namespace {

// Unit-norm copy of v − mean into out; throws if nothing is left.
void centre_normalise(const double* v, const std::vector<double>& mean, double* out, const std::string& what) {
  double norm2 = 0;
  for (int p = 0; p < kMnistPixels; ++p) {
    out[p] = v[p] - mean[p];
    norm2 += out[p] * out[p];
  }
  if (!(norm2 > 1e-24)) throw UsageError(fmt::format("MNIST: {} equals the mean training image; it has no direction", what));
  const double inv = 1.0 / std::sqrt(norm2);
  for (int p = 0; p < kMnistPixels; ++p) out[p] *= inv;
}

}  // namespace

MnistTask MnistTask::build(const MnistDigits& digits, const MnistSplit& split) {
  if (split.train.empty() || split.test.empty()) throw std::invalid_argument("MnistTask: empty split");
  MnistTask task;
  task.mean_image.assign(kMnistPixels, 0.0);
  std::vector<double> class_sum(static_cast<std::size_t>(kMnistClasses) * kMnistPixels, 0.0);
  std::array<int, kMnistClasses> class_n{};
  for (int i : split.train) {
    const int c = digits.label[i];
    ++class_n[c];
    for (int p = 0; p < kMnistPixels; ++p) {
      const double x = digits.pixel(i, p);
      task.mean_image[p] += x;
      class_sum[c * kMnistPixels + p] += x;
    }
  }
  for (double& x : task.mean_image) x /= static_cast<double>(split.train.size());

  std::vector<double> raw(kMnistPixels);
  auto fill = [&](const std::vector<int>& idx, std::vector<double>& out, std::vector<int>& labels) {
    out.resize(idx.size() * kMnistPixels);
    labels.resize(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      for (int p = 0; p < kMnistPixels; ++p) raw[p] = digits.pixel(idx[k], p);
      centre_normalise(raw.data(), task.mean_image, out.data() + k * kMnistPixels, fmt::format("digit {}", idx[k]));
      labels[k] = digits.label[idx[k]];
    }
  };
  fill(split.train, task.train, task.train_label);
  fill(split.test, task.test, task.test_label);

  task.directions.resize(static_cast<std::size_t>(kMnistClasses) * kMnistPixels);
  for (int c = 0; c < kMnistClasses; ++c) {
    if (class_n[c] == 0) throw UsageError(fmt::format("MNIST: class {} has no training digit", c));
    for (int p = 0; p < kMnistPixels; ++p) raw[p] = class_sum[c * kMnistPixels + p] / class_n[c];
    centre_normalise(raw.data(), task.mean_image, task.directions.data() + c * kMnistPixels,
                     fmt::format("the mean image of class {}", c));
  }
  return task;
}

}  // namespace headspec
