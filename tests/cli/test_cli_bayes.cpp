// headspec bayes from the command line (docs/cli.md): one JSON object; the quadrature agrees
// with Monte Carlo within its standard errors; bad flags give status 2 naming them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace headspec::testing;

TEST(CliBayes, PrintsOneJsonObject) {
  const auto r = run_cli("bayes --prior flip --nu 2,2 --L 5 --samples 20000");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["mmse"].get<double>(), 0.0);
  EXPECT_LT(j["mmse"].get<double>(), 0.8);  // below 1 − 1/L: the signal helps
  EXPECT_GT(j["stderr"].get<double>(), 0.0);
  const auto q = run_cli("bayes --prior spike --nu 2 --L 5 --method quadrature");
  ASSERT_EQ(q.status, 0) << q.err;
  const auto m = run_cli("bayes --prior spike --nu 2 --L 5 --samples 100000");
  const auto jq = nlohmann::json::parse(q.out), jm = nlohmann::json::parse(m.out);
  EXPECT_NEAR(jq["mmse"].get<double>(), jm["mmse"].get<double>(), 4 * jm["stderr"].get<double>());
  const auto bad = run_cli("bayes --nu 2,2 --method quadrature");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--method"), std::string::npos);
  EXPECT_EQ(run_cli("bayes --samples 1").status, 2);
}
