// The MNIST train/test split (docs/model.md §11), on a package-shaped fixture made here.
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
