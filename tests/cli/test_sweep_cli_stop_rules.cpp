// The theory's stop rules (docs/theory.md §3) in `headspec sweep --engine theory`: the
// summary says what `headspec theory` says.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"
#include "csv_columns.hpp"

using namespace headspec::testing;

TEST(SweepCli, TheoryStopRulesInTheSummaryAsInTheory) {
  const auto dir = fresh_dir("sweep_settled");
  const auto out = dir / "rows.csv", sum = dir / "summary.csv";
  const std::string rule = "--until-error-settled 2e-3 --error-window 40 ";
  const auto r = run_cli("sweep --engine theory --mc-method sobol --grid 'H=1,2' --prior gauss --nu 4,4 --L 4 --lr 1 --mc 300 --dt 0.5 "
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
    const auto th = run_cli("theory --mc-method sobol --prior gauss --nu 4,4 --L 4 --H " + std::to_string(H) +
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
  const auto late = run_cli("sweep --engine theory --mc-method sobol --grid 'H=2' --prior gauss --nu 4,4 --L 4 --mc 300 --dt 0.5 "
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
