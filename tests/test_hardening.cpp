// What the hardening runs (docs/testing.md) rely on and what they found: the check-only
// mode of the command line that the fuzz target fuzz/fuzz_cli.cpp drives, and one
// regression test per finding of the fuzz targets and the sanitizer build.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/prior.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

// run_cli(check_only) on a command line split at spaces.
int check_only(const std::string& line) {
  std::vector<std::string> args{"headspec"};
  std::istringstream in(line);
  for (std::string a; in >> a;) args.push_back(a);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return headspec::app::run_cli(static_cast<int>(args.size()), argv.data(), true);
}

Prior mixture_text(const std::string& text) {
  std::istringstream in(text);
  return Prior::mixture_stream(in, "text");
}

}  // namespace

// The fuzz target's contract: flags are checked exactly as for a run, then nothing runs
// and nothing is written. Each command below would take hours if it ran (and so exceed
// the test's time limit, without a clock read here).
TEST(CheckOnly, ValidCommandsReturnZeroWithoutRunningOrWriting) {
  const auto dir = fresh_dir("check_only");
  const std::string out = (dir / "x.csv").string();
  EXPECT_EQ(check_only("simulate --engine dense --D 1000000 --T 1000 --out " + out), 0);
  EXPECT_EQ(check_only("theory --mc 100000000 --T 1000 --dt 0.001 --out " + out), 0);
  EXPECT_EQ(check_only("bayes --samples 100000000000"), 0);
  EXPECT_EQ(check_only("sweep --engine gram --grid H=1:100 --D 1000000000 --T 1000 --runs 100 --out " + out +
                       " --summary " + (dir / "s.csv").string()),
            0);
  EXPECT_EQ(check_only("mnist --data " + (dir / "absent").string() + " --T 1000 --out " + out), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(CheckOnly, BadInputIsStatusTwoAsForARun) {
  EXPECT_EQ(check_only("simulate --T -1"), 2);
  EXPECT_EQ(check_only("simulate --engine warp"), 2);
  EXPECT_EQ(check_only("theory --mc 1"), 2);
  EXPECT_EQ(check_only("bayes --method guess"), 2);
  EXPECT_EQ(check_only("sweep --grid H=0:2"), 2);
  EXPECT_EQ(check_only("mnist --nu 1,2"), 2);
  EXPECT_EQ(check_only("figure 15"), 2);
  EXPECT_EQ(check_only("nosuchcommand"), 2);
}

// Found by review while writing the fuzz target: 2 points × 2·10^9 runs overflowed the
// int task count of `sweep` (undefined behaviour; before the fix, status 1 from
// std::vector's length check).
TEST(Hardening, SweepWithMoreThanIntMaxRunsIsBadInput) {
  const auto r = run_cli("sweep --engine gram --grid 'H=1:2' --runs 2000000000 --T 0 --L 5 --D 100");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--runs"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Found by fuzz_mixture (input "2 1e-3\n1e-300 -71e200\n"): every entry is finite, but
// θ² overflows, so ν was +inf and log w(λ) NaN. Likewise for the weights' sum, and for
// the atom √ν of a spike.
TEST(Hardening, MixtureWhoseSquaresOrWeightSumOverflowIsRejected) {
  EXPECT_THROW(mixture_text("2 1e-3\n1e-300 -71e200\n"), UsageError);
  EXPECT_THROW(mixture_text("1 1e200 0\n"), UsageError);
  EXPECT_THROW(mixture_text("1 1e154 1e154 1e154\n"), UsageError);  // each θ_f² finite, |θ|² not
  EXPECT_THROW(mixture_text("1e308 1\n1e308 -1\n"), UsageError);
  EXPECT_THROW(Prior::spike(Eigen::Vector2d(1e308, 1e308)), UsageError);
  try {
    Prior::spike(Eigen::Vector2d(1e308, 1e308));
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--nu:", 0), 0u) << e.what();
  }
  // Large but representable values are still accepted.
  const Prior p = mixture_text("1e300 1e150\n1e-300 -1e150\n");
  EXPECT_TRUE(p.nu().allFinite());
  EXPECT_NEAR(p.weights().sum(), 1.0, 1e-15);
}
