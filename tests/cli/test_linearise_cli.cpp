// `headspec linearise` (docs/cli.md): the JSON it writes and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "headspec/linearisation.hpp"

namespace headspec {
namespace {

TEST(LineariseCli, JsonAndBadInput) {
  using headspec::testing::run_cli;
  auto r = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 1000 --fd-step 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--fd-step"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run_cli("linearise --mc-method sobol --L 5 --H 1 --mc 1000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--H"), std::string::npos) << r.err;
  r = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 1000 --direction 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--direction"), std::string::npos) << r.err;
  r = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 500 --approach-mc 500 --dt 1 --T-max 20 --newton-iterations 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "linearise");
  EXPECT_EQ(j["group_size"], 4);
  EXPECT_TRUE(j["spread_mode"]["lambda_plus"].is_number());
  EXPECT_EQ(j["coordinates"].size(), 9u);  // M (4), Q (3), c (2); R is not a free coordinate
}

// Newton's method keeps to admissible states (Q⊥ = Q − MMᵀ positive definite): from this
// seed's plateau at t = 150 a full step lands where Q_11 < Q_12 (heads more alike than a
// network allows), and the residual there was the method's end.
TEST(LineariseCli, NewtonStaysWhereQPerpIsPositiveDefinite) {
  using headspec::testing::run_cli;
  const auto r = run_cli(
      "linearise --mc-method sobol --prior flip --nu 2,2 --L 5 --H 2 --activation softmax --mc 20000 --approach-mc 4000 --dt 1 "
      "--T-max 150 --seed 8");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto f = nlohmann::json::parse(r.out)["fixed_point"];
  // H = 2, R = 0: Q⊥ = [[a, b], [b, d]]
  const double a = f["Q_1_1"].get<double>() - std::pow(f["M_1_1"].get<double>(), 2) - std::pow(f["M_1_2"].get<double>(), 2);
  const double d = f["Q_2_2"].get<double>() - std::pow(f["M_2_1"].get<double>(), 2) - std::pow(f["M_2_2"].get<double>(), 2);
  const double b = f["Q_1_2"].get<double>() - f["M_1_1"].get<double>() * f["M_2_1"].get<double>() -
                   f["M_1_2"].get<double>() * f["M_2_2"].get<double>();
  EXPECT_GT(a * d - b * b, 0.0);
  EXPECT_GT(a + d, 0.0);
}

// With several seeds, --along gives a(t) and ℓ(t) over the seeds: at every t their mean and
// sample standard deviation are those of the seeds' own series (seed 1 at the top level, the
// others in other_seeds), and λ⁺ likewise.
TEST(LineariseCli, GrowthRateOverSeedsIsTheSeedsMeanAndSpread) {
  using headspec::testing::run_cli;
  const auto r = run_cli(
      "linearise --mc-method sobol --L 5 --H 2 --mc 1000 --approach-mc 500 --dt 1 --T-max 20 --newton-iterations 0 --along 20 "
      "--along-every 10 --mc-seeds 3");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<nlohmann::json> seeds = {j};
  for (const auto& other : j["other_seeds"]) seeds.push_back(other);
  ASSERT_EQ(seeds.size(), 3u);
  const auto& summary = j["along_over_seeds"];
  ASSERT_EQ(summary["t"], j["along"]["t"]);
  for (const char* series : {"rate", "log_growth"})
    for (std::size_t i = 0; i < summary["t"].size(); ++i) {
      double mean = 0, var = 0;
      for (const auto& s : seeds) mean += s["along"][series][i].get<double>() / 3;
      for (const auto& s : seeds) var += std::pow(s["along"][series][i].get<double>() - mean, 2) / 2;
      EXPECT_NEAR(summary[series]["mean"][i].get<double>(), mean, 1e-15) << series << " " << i;
      EXPECT_NEAR(summary[series]["sd"][i].get<double>(), std::sqrt(var), 1e-15) << series << " " << i;
      EXPECT_NEAR(summary[series]["stderr"][i].get<double>(), std::sqrt(var / 3), 1e-15) << series << " " << i;
    }
  EXPECT_GT(summary["rate"]["sd"][0].get<double>(), 0.0) << "three sample sets, three growth rates";
  double lambda_mean = 0;
  for (const auto& s : seeds) lambda_mean += s["spread_mode"]["lambda_plus"].get<double>() / 3;
  EXPECT_NEAR(j["lambda_plus_over_seeds"]["mean"].get<double>(), lambda_mean, 1e-15);
  const auto one = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 500 --approach-mc 500 --dt 1 --T-max 10 "
                           "--newton-iterations 0 --along 10 --along-every 10");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_FALSE(nlohmann::json::parse(one.out).contains("along_over_seeds")) << "one seed has no spread";
}

// λ⁺'s mean over seeds is over the converged fixed points only: seven Newton iterations from
// t = 20 bring two of these four sample sets below the residual 1e-10 and leave two above it.
TEST(LineariseCli, LambdaPlusOverSeedsLeavesOutUnconvergedSeeds) {
  using headspec::testing::run_cli;
  const auto r = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 1000 --approach-mc 500 --dt 1 --T-max 20 "
                         "--newton-iterations 7 --mc-seeds 4");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<nlohmann::json> seeds = {j};
  for (const auto& other : j["other_seeds"]) seeds.push_back(other);
  ASSERT_EQ(seeds.size(), 4u);
  std::vector<double> used;
  for (const auto& s : seeds)
    if (s["fixed_point"]["residual"].get<double>() < 1e-10) used.push_back(s["spread_mode"]["lambda_plus"].get<double>());
  ASSERT_GT(used.size(), 1u) << "the case needs converged seeds";
  ASSERT_LT(used.size(), 4u) << "the case needs an unconverged seed";
  const auto& summary = j["lambda_plus_over_seeds"];
  EXPECT_EQ(summary["seeds_used"].get<std::size_t>(), used.size());
  EXPECT_EQ(summary["lambda_plus"].size(), 4u) << "every seed's value is still listed";
  double mean = 0;
  for (double v : used) mean += v / used.size();
  EXPECT_NEAR(summary["mean"].get<double>(), mean, 1e-15);
  EXPECT_NE(r.err.find("seeds left out"), std::string::npos) << r.err;
  const auto none = run_cli("linearise --mc-method sobol --L 5 --H 2 --mc 1000 --approach-mc 500 --dt 1 --T-max 20 "
                            "--newton-iterations 0 --mc-seeds 2");
  ASSERT_EQ(none.status, 0) << none.err;
  const auto all = nlohmann::json::parse(none.out)["lambda_plus_over_seeds"];
  EXPECT_EQ(all["seeds_used"].get<std::size_t>(), 2u) << "with no converged seed the summary is over all";
  EXPECT_NE(all["note"].get<std::string>().find("no seed converged"), std::string::npos);
}

// A mixture prior symmetric under θ_f → −θ_f in both directions (four atoms ±e_1, ±e_2) is
// linearised like flip and gauss: both directions' columns of M are the fixed point's zeros,
// the group has 2! × 2² elements; one that is symmetric in direction 2 only names it; one
// symmetric in no direction is refused naming --prior.
TEST(LineariseCli, MirrorSymmetricMixturesAreLinearised) {
  using headspec::testing::fresh_dir;
  using headspec::testing::run_cli;
  const auto dir = fresh_dir("linearise_mixture");
  auto write = [&](const std::string& name, const std::string& rows) {
    const auto path = dir / name;
    std::ofstream(path) << rows;
    return path.string();
  };
  const std::string both = write("both.txt", "0.25 1 0\n0.25 -1 0\n0.25 0 1\n0.25 0 -1\n");
  const std::string second = write("second.txt", "0.5 1 1\n0.5 1 -1\n");
  const std::string none = write("none.txt", "0.5 1 1\n0.5 2 1\n");
  const std::string flags = " --L 4 --H 2 --mc 500 --approach-mc 500 --dt 1 --T-max 20 --newton-iterations 0";
  auto r = run_cli("linearise --mc-method sobol --prior mixture:" + both + flags);
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["group_size"], 8);
  EXPECT_TRUE(std::isfinite(j["spread_mode"]["lambda_plus"].get<double>()));
  for (const auto& row : j["approach"])
    for (const char* m : {"M_1_1", "M_1_2", "M_2_1", "M_2_2"}) EXPECT_EQ(row[m].get<double>(), 0.0) << m;
  r = run_cli("linearise --mc-method sobol --prior mixture:" + second + flags + " --direction 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--direction: 1 is not a symmetric direction of the prior (this prior's: 2)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run_cli("linearise --mc-method sobol --prior mixture:" + second + flags).status, 0);
  r = run_cli("linearise --mc-method sobol --prior mixture:" + none + flags);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--prior"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace headspec
