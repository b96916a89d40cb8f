// The check-only mode of the command line that the fuzz target fuzz/fuzz_cli.cpp drives
// (docs/testing.md, hardening).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_helpers.hpp"

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

}  // namespace

// The fuzz target's contract: flags are checked exactly as for a run, then nothing runs
// and nothing is written. Each command below would take hours if it ran (and so exceed
// the test's time limit, without a clock read here); the two largest need their limits
// raised (docs/cli.md "Limits"), and are refused without.
TEST(CheckOnly, ValidCommandsReturnZeroWithoutRunningOrWriting) {
  const auto dir = fresh_dir("check_only");
  const std::string out = (dir / "x.csv").string();
  const std::string unlimited = " --max-memory 1e6 --max-steps 1e20";
  EXPECT_EQ(check_only("simulate --engine dense --D 1000000 --T 1000 --out " + out), 0);
  EXPECT_EQ(check_only("theory --mc-method sobol --mc 100000000 --T 1000 --dt 0.001 --max-memory 20 --out " + out), 2);
  EXPECT_EQ(check_only("theory --mc-method sobol --mc 100000000 --T 1000 --dt 0.001 --out " + out + unlimited), 0);
  // laplace (the default here) has no samples; its work is counted as 10^6 samples per evaluation.
  EXPECT_EQ(check_only("theory --T 100000 --dt 0.001 --out " + out), 2);
  EXPECT_EQ(check_only("theory --T 100000 --dt 0.001 --out " + out + unlimited), 0);
  // auto with fresh samples is sobol: its 10^8 samples per evaluation count, not laplace's none.
  EXPECT_EQ(check_only("theory --mc-resample --mc 100000000 --T 1000 --dt 0.001 --out " + out), 2);
  EXPECT_EQ(check_only("bayes --samples 100000000000"), 0);
  EXPECT_EQ(check_only("sweep --engine gram --grid H=1:100 --D 1000000000 --T 1000 --runs 100 --out " + out +
                       " --summary " + (dir / "s.csv").string() + unlimited),
            0);
  EXPECT_EQ(check_only("mnist --data " + (dir / "absent").string() + " --T 1000 --out " + out), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(CheckOnly, BadInputIsStatusTwoAsForARun) {
  EXPECT_EQ(check_only("simulate --T -1"), 2);
  EXPECT_EQ(check_only("simulate --engine warp"), 2);
  EXPECT_EQ(check_only("theory --mc-method sobol --mc 1"), 2);
  EXPECT_EQ(check_only("bayes --method guess"), 2);
  EXPECT_EQ(check_only("sweep --grid H=0:2"), 2);
  EXPECT_EQ(check_only("mnist --nu 1,2"), 2);
  EXPECT_EQ(check_only("figure 16"), 2);
  EXPECT_EQ(check_only("figure 4 --lr-schedule warm"), 2);
  EXPECT_EQ(check_only("theory --mc-method sobol --lr-schedule power:0,1"), 2);
  EXPECT_EQ(check_only("nosuchcommand"), 2);
}
