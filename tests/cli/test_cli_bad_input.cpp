// Bad input on the command line (docs/cli.md): one line on stderr naming the flag, status 2,
// no output file and no temporary file left.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cli_helpers.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

namespace {

struct BadInput {
  std::string args;
  std::string flag;  // must appear in the message
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, OneLineStatusTwoNoFile) {
  const auto dir = fresh_dir("bad");
  const auto out = dir / "out.csv";
  const auto r = run_cli("simulate --D 200 --T 1 --out " + out.string() + " " + GetParam().args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().flag), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".json"));
  EXPECT_TRUE(fs::is_empty(dir)) << "a temporary file was left behind";
}

INSTANTIATE_TEST_SUITE_P(
    InterfaceErrors, CliBadInput,
    ::testing::Values(BadInput{"--no-such-flag 3", "--no-such-flag"}, BadInput{"--prior nope", "--prior"},
                      BadInput{"--activation relu", "--activation"}, BadInput{"--readout half", "--readout"},
                      BadInput{"--engine quantum", "--engine"}, BadInput{"--H 0", "--H"}, BadInput{"--L 1", "--L"},
                      BadInput{"--D 3", "--D"}, BadInput{"--nu 2,-1", "--nu"}, BadInput{"--nu 2,x", "--nu"},
                      BadInput{"--nu ''", "--nu"}, BadInput{"--H two", "--H"}, BadInput{"--lr abc", "--lr"},
                      BadInput{"--lr 0", "--lr"}, BadInput{"--lr -1", "--lr"}, BadInput{"--batch 0", "--batch"},
                      BadInput{"--noise -0.5", "--noise"}, BadInput{"--q0 0", "--q0"}, BadInput{"--T -1", "--T"},
                      BadInput{"--record-every 0", "--record-every"}, BadInput{"--seed -4", "--seed"},
                      BadInput{"--runs 0", "--runs"}, BadInput{"--test-samples 0", "--test-samples"},
                      BadInput{"--prior mixture:/nonexistent/file", "--prior"},
                      BadInput{"--readout-lr x", "--readout-lr"}));

}  // namespace

// A misspelt subcommand is named, with the list of them, on one line (status 2): CLI11 alone
// said "A subcommand is required".
TEST(CliSubcommand, UnknownSubcommandIsNamed) {
  const auto r = run_cli("simulat --T 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "headspec: error: unknown subcommand 'simulat' (one of: simulate, bayes, figure, theory, mnist, sweep, "
            "linearise)\n");
  const auto none = run_cli("");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("A subcommand is required"), std::string::npos) << none.err;
}
