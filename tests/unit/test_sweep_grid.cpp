// The sweep grid (docs/cli.md "sweep"): ranges, value lists and '|' separators, row-major
// order of the points, and bad axes or values refused naming --grid.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/sweep.hpp"

using namespace headspec;

TEST(SweepGrid, RangesVectorsAndRowMajorOrder) {
  const auto axes = parse_grid("activation=softmax,softmax1,bsoftmax;H=1:3;nu=1,1|5,5|10,10", true);
  ASSERT_EQ(axes.size(), 3u);
  EXPECT_EQ(axes[0].values, (std::vector<std::string>{"softmax", "softmax1", "bsoftmax"}));
  EXPECT_EQ(axes[1].values, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(axes[2].values, (std::vector<std::string>{"1,1", "5,5", "10,10"}));
  const auto points = grid_points(axes, ModelSettings{}, 100);
  ASSERT_EQ(points.size(), 27u);
  // Row-major: the last key varies fastest.
  EXPECT_EQ(points[0].model.activation, "softmax");
  EXPECT_EQ(points[0].model.H, 1);
  EXPECT_EQ(points[1].model.nu, "5,5");
  EXPECT_EQ(points[3].model.H, 2);
  EXPECT_EQ(points[9].model.activation, "softmax1");
  EXPECT_EQ(points[26].index, (std::vector<std::size_t>{2, 2, 2}));
  // D and scalar keys; '|' also separates scalar values; untouched settings keep the base.
  ModelSettings base;
  base.L = 7;
  const auto d = grid_points(parse_grid("D=100|1000;lr=0.5", true), base, 50);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].D, 1000);
  EXPECT_EQ(d[1].model.lr, 0.5);
  EXPECT_EQ(d[1].model.L, 7);
  EXPECT_EQ(grid_points(parse_grid("", true), base, 50).size(), 1u);
}

TEST(SweepGrid, BadAxesAndValuesNameTheGrid) {
  auto message = [](const std::string& grid, bool with_D) {
    try {
      grid_points(parse_grid(grid, with_D), ModelSettings{}, 100);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string grid : {"Hx=1", "H", "H=1;H=2", "H=3:1", "H=1:b", "H=1.5:3", "H=", "H=1,,2", "H=1;", "H=0",
                                 "L=1", "nu=1,-1", "activation=relu", "lr=abc", "H=2.5"})
    EXPECT_EQ(message(grid, true).rfind("--grid: ", 0), 0u) << grid << ": " << message(grid, true);
  EXPECT_EQ(message("D=100", false).rfind("--grid: unknown key 'D'", 0), 0u) << "D only for finite-D engines";
  EXPECT_NE(message("activation=softmax,relu", true).find("activation=relu"), std::string::npos);
}

// How an axis splits its values comes from its parameter: '|' alone for values with commas
// (ν, a schedule), "a:b" a range for numbers (ν's numbers too) but part of other text.
TEST(SweepGrid, EachKeySplitsItsValuesAsItsParameterSays) {
  const auto axes = parse_grid("lr-schedule=power:100,0.75|inverse:10;nu=1:3;prior=mixture:a.txt;L=2:3,5", true);
  ASSERT_EQ(axes.size(), 4u);
  EXPECT_EQ(axes[0].values, (std::vector<std::string>{"power:100,0.75", "inverse:10"}));
  EXPECT_EQ(axes[1].values, (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(axes[2].values, (std::vector<std::string>{"mixture:a.txt"}));
  EXPECT_EQ(axes[3].values, (std::vector<std::string>{"2", "3", "5"}));
  EXPECT_EQ(parse_grid("nu=2,2|4,4", true)[0].values, (std::vector<std::string>{"2,2", "4,4"}));
  EXPECT_EQ(parse_grid("D=100:102", true)[0].values, (std::vector<std::string>{"100", "101", "102"}));
}
