// `headspec simulate --engine gram` (docs/cli.md): any D from the frame size F + 1 + H up
// to 2^52, the same CSV as the dense engine, reproducible whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace headspec::testing;

namespace {
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}
}  // namespace

TEST(GramCli, RunsAtDTenToTheTwelveWithTheDenseColumns) {
  const auto r = run_cli("simulate --engine gram --D 1000000000000 --T 2e-9 --record-every 1e-9 --test-samples 100");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = csv_rows(r.out);
  ASSERT_EQ(rows.size(), 4u);  // header, t = 0, 1e-9, 2e-9
  const auto dense = run_cli("simulate --engine dense --D 100 --T 1 --test-samples 10");
  ASSERT_EQ(dense.status, 0) << dense.err;
  EXPECT_EQ(rows[0], csv_rows(dense.out)[0]);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), rows[0].size());
    for (const auto& cell : rows[i]) EXPECT_TRUE(std::isfinite(std::stod(cell))) << cell;
  }
  // Q(0) = q0 χ²(D)/D: within 10^-4 of q0 = 1 at D = 10^12 (its sd is 1.4·10^-6).
  int q11 = 0;
  while (rows[0][q11] != "Q_1_1") ++q11;
  EXPECT_NEAR(std::stod(rows[1][q11]), 1.0, 1e-4);
}

TEST(GramCli, DimensionLimits) {
  // Defaults F = 2, H = 2: the frame needs D ≥ 5.
  EXPECT_EQ(run_cli("simulate --engine gram --D 5 --T 2 --test-samples 10").status, 0);
  const auto small = run_cli("simulate --engine gram --D 4 --T 1");
  EXPECT_EQ(small.status, 2);
  EXPECT_NE(small.err.find("--D"), std::string::npos) << small.err;
  // Past 2^53 D is refused as such; below, 2^52 steps are refused by the work's limit.
  const auto huge = run_cli("simulate --engine gram --D 9007199254740992 --T 1 --max-steps 1e30");
  EXPECT_EQ(huge.status, 2);
  EXPECT_NE(huge.err.find("--D"), std::string::npos) << huge.err;
  const auto long_run = run_cli("simulate --engine gram --D 4503599627370496 --T 1");
  EXPECT_EQ(long_run.status, 2);
  EXPECT_NE(long_run.err.find("--max-steps"), std::string::npos) << long_run.err;
}

TEST(GramCli, SameSeedSameBytesWhateverTheThreadCount) {
  const auto dir = fresh_dir("gramdet");
  const std::string args =
      "simulate --engine gram --D 3000 --L 4 --T 2 --runs 3 --batch 2 --noise 0.1 --test-samples 300 --record-every 0.5 "
      "--seed 5 --out ";
  const auto a = dir / "one.csv", b = dir / "two.csv";
  ASSERT_EQ(run_cli(args + a.string(), "OMP_NUM_THREADS=1").status, 0);
  ASSERT_EQ(run_cli(args + b.string(), "OMP_NUM_THREADS=2").status, 0);
  EXPECT_FALSE(read_file(a).empty());
  EXPECT_EQ(read_file(a), read_file(b));
}
