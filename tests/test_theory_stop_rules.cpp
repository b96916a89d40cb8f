// The stop rules of the theory (docs/theory.md §3): every |derivative| < TOL
// (--until-converged) and the settled error (--until-error-settled, --error-window), in
// `headspec theory` and `headspec sweep --engine theory`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/theory_integrator.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

std::vector<Record> records_with_errors(const std::vector<double>& errors, double every) {
  std::vector<Record> records;
  for (std::size_t k = 0; k < errors.size(); ++k) {
    Record r;
    r.t = static_cast<double>(k) * every;
    r.loss = errors[k];
    records.push_back(r);
  }
  return records;
}

IntegrationSpec window_spec(double tol, double window, double every) {
  IntegrationSpec s;
  s.dt = 0.5;
  s.T = 100;
  s.record_every = every;
  s.until_error_settled = tol;
  s.error_window = window;
  return s;
}

// The columns of a CSV without quotes (the theory's), by name.
struct Rows {
  std::vector<std::string> header;
  std::vector<std::vector<double>> values;
  std::size_t column(const std::string& name) const {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw std::runtime_error("no column " + name);
  }
};

std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  return cells;
}

Rows parse(const std::string& csv) {
  Rows rows;
  std::stringstream in(csv);
  std::string line;
  std::getline(in, line);
  rows.header = split_line(line);
  while (std::getline(in, line)) {
    std::vector<double> v;
    for (const auto& c : split_line(line)) v.push_back(c.empty() ? std::nan("") : std::stod(c));
    rows.values.push_back(v);
  }
  return rows;
}

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
    "theory --prior gauss --nu 4,4 --L 4 --H 2 --lr 1 --mc 300 --dt 0.5 --record-every 2 --init-D 200 ";

}  // namespace

TEST(ErrorSettled, ComparesTheMeansOfFourQuarterWindowsRelatively) {
  const IntegrationSpec s = window_spec(0.01, 8, 1);  // m = 2 records per quarter
  EXPECT_EQ(s.records_per_quarter_window(), 2);
  auto settled = [&](std::vector<double> quarter_means, double first = 5.0) {
    std::vector<double> errors = {first};  // an older record, outside the window
    for (double q : quarter_means) errors.insert(errors.end(), {q, q});
    return error_settled(records_with_errors(errors, 1), s);
  };
  EXPECT_FALSE(error_settled(records_with_errors({1, 1, 1, 1, 1, 1, 1}, 1), s));  // fewer than 4m records
  EXPECT_TRUE(settled({1.0, 1.003, 1.006, 1.009}));    // range 0.009 < 0.01 · 1.009
  EXPECT_FALSE(settled({1.0, 1.0, 1.0, 1.011}));       // 0.011 > 0.01 · 1.011
  EXPECT_FALSE(settled({0.1, 0.1, 0.1, 0.109}));       // relative: the same change is too much at 0.1
  // A minimum in the window's middle: the two halves' means are equal, the quarters' are not.
  EXPECT_FALSE(settled({1.02, 1.0, 1.0, 1.02}));
  // Noise within the quarters averages out: ±0.05 alternating, equal means.
  EXPECT_TRUE(error_settled(records_with_errors({1.05, 0.95, 1.05, 0.95, 1.05, 0.95, 1.05, 0.95}, 1), s));
  EXPECT_FALSE(error_settled(records_with_errors({1, 1, 1, 1, NAN, 1, 1, 1}, 1), s));
  IntegrationSpec off = s;
  off.until_error_settled = 0;
  EXPECT_FALSE(error_settled(records_with_errors({1, 1, 1, 1, 1, 1, 1, 1}, 1), off));
}

TEST(ErrorSettled, WindowMustBeAWholeMultipleOfFourRecordIntervals) {
  EXPECT_NO_THROW(window_spec(0.01, 4, 1).validate(MonteCarloMode::Fixed));
  EXPECT_NO_THROW(window_spec(0.01, 8, 1).validate(MonteCarloMode::Fixed));
  for (double window : {1.0, 2.0, 3.0, 6.0, 0.0, -4.0, std::nan("")}) {
    try {
      window_spec(0.01, window, 1).validate(MonteCarloMode::Fixed);
      ADD_FAILURE() << "window " << window << " accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--error-window:", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(window_spec(-1, 4, 1).validate(MonteCarloMode::Fixed), UsageError);
  EXPECT_THROW(window_spec(std::nan(""), 4, 1).validate(MonteCarloMode::Fixed), UsageError);
  EXPECT_NO_THROW(window_spec(0, 3, 1).validate(MonteCarloMode::Fixed));  // the window is unused without the rule
}

TEST(ErrorSettled, StoppedByRuleIsAStopBeforeTheLastRecord) {
  IntegrationSpec s = window_spec(0.01, 8, 2);
  s.T = 9;  // records at 0, 2, 4, 6, 8: the last scheduled record is t = 8
  EXPECT_EQ(s.last_record_time(), 8);
  Trajectory tr;
  tr.records = records_with_errors({1, 1, 1, 1, 1}, 2);
  EXPECT_FALSE(stopped_by_rule(tr, s));
  tr.records.pop_back();
  double at = 0;
  EXPECT_TRUE(stopped_by_rule(tr, s, &at));
  EXPECT_EQ(at, 6);
  tr.diverged = true;
  EXPECT_FALSE(stopped_by_rule(tr, s));
  tr.diverged = false;
  s.until_error_settled = 0;
  EXPECT_FALSE(stopped_by_rule(tr, s));  // no rule: a short trajectory is not a converged one
}

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
    const auto b = run_cli("theory --T 10 --record-every 4 " + bad + " --out " + path);
    EXPECT_EQ(b.status, 2) << bad << ": " << b.err;
    EXPECT_FALSE(std::filesystem::exists(path)) << bad;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
    EXPECT_NE(b.err.find(flag), std::string::npos) << bad << ": " << b.err;
  }
  EXPECT_EQ(run_cli("theory --T 10 --record-every 4 --until-error-settled 1e-3 --error-window 16 --mc 50 --dt 1 "
                    "--init-D 50 --out " + path).status, 0);
}

TEST(SweepCli, TheoryStopRulesInTheSummaryAsInTheory) {
  const auto dir = fresh_dir("sweep_settled");
  const auto out = dir / "rows.csv", sum = dir / "summary.csv";
  const std::string rule = "--until-error-settled 2e-3 --error-window 40 ";
  const auto r = run_cli("sweep --engine theory --grid 'H=1,2' --prior gauss --nu 4,4 --L 4 --lr 1 --mc 300 --dt 0.5 "
                         "--record-every 2 --init-D 200 --T 400 " + rule + "--out " + out.string() + " --summary " +
                         sum.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
  EXPECT_EQ(meta["theory"]["until_error_settled"], 2e-3);
  const Rows s = parse(read_file(sum));
  ASSERT_EQ(s.values.size(), 2u);
  // Each point as `headspec theory` runs it alone: the same stop, at the same time.
  for (std::size_t p = 0; p < 2; ++p) {
    const int H = static_cast<int>(s.values[p][s.column("H")]);
    const auto th = run_cli("theory --prior gauss --nu 4,4 --L 4 --H " + std::to_string(H) +
                            " --lr 1 --mc 300 --dt 0.5 --record-every 2 --init-D 200 --T 400 " + rule +
                            "--out " + (dir / "th.csv").string());
    ASSERT_EQ(th.status, 0) << th.err;
    const auto run = nlohmann::json::parse(read_file((dir / "th.csv.json").string()))["runs_summary"][0];
    ASSERT_EQ(s.values[p][s.column("converged")], run["converged"].get<bool>() ? 1 : 0) << "H = " << H;
    ASSERT_TRUE(run["converged"].get<bool>());
    EXPECT_EQ(s.values[p][s.column("converged_at")], run["converged_at"].get<double>());
    EXPECT_EQ(s.values[p][s.column("t")], run["converged_at"].get<double>());
  }
  // Not fired by T: 0 and an empty time.
  const auto late = run_cli("sweep --engine theory --grid 'H=2' --prior gauss --nu 4,4 --L 4 --mc 300 --dt 0.5 "
                            "--record-every 2 --init-D 200 --T 20 --until-error-settled 1e-9 --error-window 8 --summary " +
                            sum.string());
  ASSERT_EQ(late.status, 0) << late.err;
  const Rows l = parse(read_file(sum));
  EXPECT_EQ(l.values[0][l.column("converged")], 0);
  EXPECT_TRUE(std::isnan(l.values[0][l.column("converged_at")]));
  EXPECT_EQ(l.values[0][l.column("t")], 20);

  for (const std::string bad : {"--engine gram --until-error-settled 1e-3", "--engine gram --until-converged 1e-3",
                                "--engine theory --until-error-settled 1e-3 --error-window 6",
                                "--engine theory --until-error-settled -1", "--engine theory --until-converged -1"}) {
    const auto b = run_cli("sweep --grid 'H=2' --T 4 " + bad + " --summary " + (dir / "bad.csv").string());
    EXPECT_EQ(b.status, 2) << bad;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.csv")) << bad;
  }
}
