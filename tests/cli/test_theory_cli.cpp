// `headspec theory` (docs/cli.md): the columns and initial state of `simulate`, the sidecar,
// bad input, divergence, and the stop rules (docs/theory.md §3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "csv_columns.hpp"

using namespace headspec;
using namespace headspec::testing;

// The CLI (docs/cli.md `theory`): columns of `simulate`, initial state of `simulate --engine
// dense` at --init-D with the same seed, R(0) = 0 unless --keep-R, errors before output.
namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}
std::vector<std::vector<std::string>> rows_of(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::stringstream ss(csv);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) out.push_back(split(line));
  return out;
}
}  // namespace

TEST(TheoryCli, StartsFromTheDenseInitialStateWithTheSameColumns) {
  using headspec::testing::run_cli;
  const std::string common = "--L 4 --H 2 --T 1 --record-every 0.5 --seed 9";
  // One thread: steps at D = 500 are too short to share.
  const auto sim = run_cli("simulate --engine dense --D 500 --test-samples 10 " + common, "OMP_NUM_THREADS=1");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto th = run_cli("theory --mc-method sobol --init-D 500 --mc 500 --dt 0.1 " + common);
  ASSERT_EQ(th.status, 0) << th.err;
  const auto keep = run_cli("theory --mc-method sobol --init-D 500 --mc 500 --dt 0.1 --keep-R " + common);
  ASSERT_EQ(keep.status, 0) << keep.err;
  const auto s = rows_of(sim.out), t = rows_of(th.out), k = rows_of(keep.out);
  // The same columns; the simulation's CSV ends with the standard error of its estimated loss.
  ASSERT_EQ(s[0].back(), "loss_se");
  ASSERT_EQ(std::vector<std::string>(s[0].begin(), s[0].end() - 1), t[0]);
  ASSERT_EQ(t.size(), 4u);  // header and t = 0, 0.5, 1
  EXPECT_EQ(t[1][1], "0");
  EXPECT_EQ(t[2][1], "0.5");
  EXPECT_EQ(t[3][1], "1");
  for (std::size_t col = 0; col < s[0].size(); ++col) {
    const std::string& name = s[0][col];
    if (name.rfind("M_", 0) == 0 || name.rfind("Q_", 0) == 0 || name.rfind("c_", 0) == 0) {
      EXPECT_EQ(s[1][col], t[1][col]) << name;
      EXPECT_EQ(s[1][col], k[1][col]) << name;
    }
    if (name.rfind("R_", 0) == 0) {
      EXPECT_EQ(t[1][col], "0");
      EXPECT_EQ(t[3][col], "0");  // R ≡ 0 stays 0
      EXPECT_EQ(k[1][col], s[1][col]);
      EXPECT_NE(k[1][col], "0");
    }
  }
}

TEST(TheoryCli, SidecarConvergenceAndBadInput) {
  using headspec::testing::run_cli;
  const auto dir = headspec::testing::fresh_dir("theory_cli");
  const std::string out = (dir / "th.csv").string();
  const auto r = run_cli("theory --mc-method sobol --L 4 --H 1 --nu 4 --prior spike --mc 300 --dt 0.5 --T 1000 --record-every 10 "
                         "--until-converged 2e-2 --init-D 200 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(headspec::testing::read_file(out + ".json"));
  EXPECT_EQ(meta["theory"]["mc"], 300);
  EXPECT_EQ(meta["theory"]["integrator"], "rk4");
  ASSERT_TRUE(meta["runs_summary"][0]["converged"].get<bool>());
  const double at = meta["runs_summary"][0]["converged_at"].get<double>();
  EXPECT_LT(at, 1000);
  const auto rows = rows_of(headspec::testing::read_file(out));
  EXPECT_EQ(std::stod(rows.back()[1]), at);  // the last row is the converged state

  for (const char* bad : {"--mc-resample --integrator rk4", "--dt 0.3", "--mc 1", "--integrator foo", "--init-D 3",
                          "--until-converged -1", "--runs 0"}) {
    const std::string path = (dir / "bad.csv").string();
    const auto b = run_cli(std::string("theory --mc-method sobol --T 1 ") + bad + " --out " + path);
    EXPECT_EQ(b.status, 2) << bad;
    EXPECT_FALSE(std::filesystem::exists(path)) << bad;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
  }
}

TEST(TheoryCli, DivergenceKeepsRowsAndSuggestsSmallerLr) {
  const auto r = headspec::testing::run_cli("theory --mc-method sobol --L 4 --mc 500 --lr 2000 --dt 0.5 --T 50 --record-every 0.5 --init-D 200");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--lr"), std::string::npos) << r.err;
  EXPECT_GE(rows_of(r.out).size(), 2u);
}

namespace {

// The rule on the rows 0 … last of a table: the mean errors of four quarters of m rows each,
// ending at `last`, differ by less than tol times the last quarter's.
bool settled_at(const Rows& rows, std::size_t last, std::size_t m, double tol) {
  if (last + 1 < 4 * m) return false;
  const std::size_t loss = rows.column("loss");
  std::vector<double> means;
  for (std::size_t q = 0; q < 4; ++q) {
    double sum = 0;
    for (std::size_t i = last + 1 - (4 - q) * m; i <= last - (3 - q) * m; ++i) sum += rows.values[i][loss];
    means.push_back(sum / static_cast<double>(m));
  }
  return *std::max_element(means.begin(), means.end()) - *std::min_element(means.begin(), means.end()) <
         tol * std::abs(means.back());
}

// Fig. 4's setting made small: gauss prior, η = 1, where the η² term keeps Q growing after
// the error has settled (docs/results.md, Fig. 4).
const std::string kSettling =
    "theory --mc-method sobol --prior gauss --nu 4,4 --L 4 --H 2 --lr 1 --mc 300 --dt 0.5 --record-every 2 --init-D 200 ";

}  // namespace

TEST(TheoryCli, ErrorSettledRuleFiresWhereTheDerivativeRuleDoesNot) {
  const auto dir = fresh_dir("theory_settled");
  const std::string out = (dir / "th.csv").string();
  const double tol = 2e-3;
  const auto r = run_cli(kSettling + "--T 400 --until-error-settled 2e-3 --error-window 40 --until-converged 1e-4 "
                                     "--out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(read_file(out + ".json"));
  EXPECT_EQ(meta["theory"]["until_error_settled"], tol);
  EXPECT_EQ(meta["theory"]["error_window"], 40);
  const auto& run = meta["runs_summary"][0];
  ASSERT_TRUE(run["converged"].get<bool>()) << r.err;
  EXPECT_EQ(run["converged_by"], "error");
  const double at = run["converged_at"].get<double>();
  EXPECT_LT(at, 400);
  const Rows rows = parse(read_file(out));
  const std::size_t t = rows.column("t");
  ASSERT_EQ(rows.values.back()[t], at);  // the last row is the state where it stopped
  // The rule holds at the last row and at no row before it (m = 40 / (4·2) = 5 rows a quarter).
  const std::size_t last = rows.values.size() - 1;
  EXPECT_TRUE(settled_at(rows, last, 5, tol));
  for (std::size_t i = 0; i < last; ++i) EXPECT_FALSE(settled_at(rows, i, 5, tol)) << "row " << i;
  // The heads' norms still grow there (the η² term, docs/model.md §6): the error settled, not the state.
  const std::size_t q = rows.column("Q_1_1");
  EXPECT_GT(rows.values[last][q] - rows.values[last - 5][q], 0);
}

TEST(TheoryCli, ErrorSettledRuleThatDoesNotFireRunsToTAndSaysSo) {
  const auto dir = fresh_dir("theory_unsettled");
  const std::string out = (dir / "th.csv").string();
  const auto r = run_cli(kSettling + "--T 40 --until-error-settled 1e-9 --error-window 8 --runs 2 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(read_file(out + ".json"));
  for (int k = 0; k < 2; ++k) {
    EXPECT_FALSE(meta["runs_summary"][k]["converged"].get<bool>());
    EXPECT_FALSE(meta["runs_summary"][k].contains("converged_at"));
    EXPECT_NE(r.err.find("run " + std::to_string(k) + " did not converge"), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find("error settled"), std::string::npos) << r.err;
  const Rows rows = parse(read_file(out));
  EXPECT_EQ(rows.values.back()[rows.column("t")], 40);
}

TEST(TheoryCli, BadErrorSettledValuesExitTwoAndWriteNothing) {
  const auto dir = fresh_dir("theory_settled_bad");
  const std::string path = (dir / "bad.csv").string();
  // With --record-every 4 the window must be 16, 32, …; the default 20 is not.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--until-error-settled -1", "--until-error-settled"},
      {"--until-error-settled nan", "--until-error-settled"},
      {"--until-error-settled 1e-3", "--error-window"},
      {"--until-error-settled 1e-3 --error-window 12", "--error-window"},
      {"--until-error-settled 1e-3 --error-window 0", "--error-window"},
      {"--error-window -4", "--error-window"}};
  for (const auto& [bad, flag] : cases) {
    const auto b = run_cli("theory --mc-method sobol --T 10 --record-every 4 " + bad + " --out " + path);
    EXPECT_EQ(b.status, 2) << bad << ": " << b.err;
    EXPECT_FALSE(std::filesystem::exists(path)) << bad;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
    EXPECT_NE(b.err.find(flag), std::string::npos) << bad << ": " << b.err;
  }
  EXPECT_EQ(run_cli("theory --mc-method sobol --T 10 --record-every 4 --until-error-settled 1e-3 --error-window 16 --mc 50 --dt 1 "
                    "--init-D 50 --out " + path).status, 0);
}
