// `headspec linearise` (docs/cli.md): the JSON it writes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "headspec/linearisation.hpp"

namespace headspec {
namespace {

TEST(LineariseCli, JsonAndBadInput) {
  using headspec::testing::run_cli;
  auto r = run_cli("linearise --L 5 --H 2 --mc 1000 --fd-step 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--fd-step"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run_cli("linearise --L 5 --H 1 --mc 1000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--H"), std::string::npos) << r.err;
  r = run_cli("linearise --L 5 --H 2 --mc 1000 --direction 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--direction"), std::string::npos) << r.err;
  r = run_cli("linearise --L 5 --H 2 --mc 500 --approach-mc 500 --dt 1 --T-max 20 --newton-iterations 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "linearise");
  EXPECT_EQ(j["group_size"], 4);
  EXPECT_TRUE(j["spread_mode"]["lambda_plus"].is_number());
  EXPECT_EQ(j["coordinates"].size(), 9u);  // M (4), Q (3), c (2); R is not a free coordinate
}

}  // namespace
}  // namespace headspec
