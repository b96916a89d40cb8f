// The settled-error stop rule of the theory (docs/theory.md §3, --until-error-settled,
// --error-window) on hand-made records.
#include <gtest/gtest.h>

#include <vector>

#include "headspec/errors.hpp"
#include "headspec/theory_integrator.hpp"

using namespace headspec;

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
