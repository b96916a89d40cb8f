// The learning-rate schedule's spellings and values (docs/model.md §4 "Schedules").
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/lr_schedule.hpp"

namespace headspec {
namespace {

TEST(LrSchedule, ConstantIsExactlyOne) {
  const LrSchedule none, constant = LrSchedule::parse("constant");
  for (double t : {0.0, 1e-9, 3.5, 1e12}) {
    EXPECT_EQ(none.factor(t), 1.0);
    EXPECT_EQ(constant.factor(t), 1.0);
  }
  nlohmann::json j = nlohmann::json::object();
  constant.to_json(j);
  EXPECT_TRUE(j.empty());  // no trace in the sidecar: the same bytes as no schedule
}

TEST(LrSchedule, InverseAndPowerFollowTheirFormulas) {
  const auto inv = LrSchedule::parse("inverse:50");
  const auto pow = LrSchedule::parse("power:20,0.75");
  for (double t : {0.0, 1.0, 50.0, 1234.5}) {
    EXPECT_DOUBLE_EQ(inv.factor(t), 50.0 / (50.0 + t));
    EXPECT_DOUBLE_EQ(pow.factor(t), std::pow(1.0 + t / 20.0, -0.75));
  }
  EXPECT_EQ(inv.factor(0), 1.0);
}

TEST(LrSchedule, StepHoldsEachFactorFromItsTimeOn) {
  const auto s = LrSchedule::parse("step:10,0.5,30,0.1");
  EXPECT_EQ(s.factor(0), 1.0);
  EXPECT_EQ(s.factor(9.999), 1.0);
  EXPECT_EQ(s.factor(10), 0.5);
  EXPECT_EQ(s.factor(29.9), 0.5);
  EXPECT_EQ(s.factor(30), 0.1);
  EXPECT_EQ(s.factor(1e9), 0.1);
}

TEST(LrSchedule, TableInterpolatesLinearlyAndRecordsItsRows) {
  const auto dir = std::filesystem::temp_directory_path() / "headspec_lr_table";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "rates.txt").string();
  std::ofstream(path) << "# t g\n0 1\n10, 0.5\n\n20 0.25  # end\n";
  const auto s = LrSchedule::parse("table:" + path);
  EXPECT_EQ(s.factor(0), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(5), 0.75);
  EXPECT_DOUBLE_EQ(s.factor(15), 0.375);
  EXPECT_EQ(s.factor(100), 0.25);
  nlohmann::json j = nlohmann::json::object();
  s.to_json(j);
  EXPECT_EQ(j["lr_schedule"], "table:" + path);
  EXPECT_EQ(j["lr_schedule_table"].size(), 3u);
  EXPECT_EQ(j["lr_schedule_table"][1][0], 10.0);
  EXPECT_EQ(j["lr_schedule_table"][1][1], 0.5);
  std::filesystem::remove_all(dir);
}

TEST(LrSchedule, BadSpellingsNameTheFlag) {
  const auto dir = std::filesystem::temp_directory_path() / "headspec_lr_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "three.txt") << "0 1 2\n";
  std::ofstream(dir / "down.txt") << "5 1\n2 1\n";
  std::ofstream(dir / "empty.txt") << "# nothing\n";
  for (const std::string& bad : std::vector<std::string>{"",
                                                         "const",
                                                         "constant:1",
                                                         "inverse",
                                                         "inverse:",
                                                         "inverse:0",
                                                         "inverse:-3",
                                                         "inverse:1,2",
                                                         "power:10",
                                                         "power:10,0",
                                                         "power:0,1",
                                                         "step:",
                                                         "step:5",
                                                         "step:5,0",
                                                         "step:5,0.5,3,0.1",
                                                         "step:-1,0.5",
                                                         "step:1,,2,3",
                                                         "inverse:0x10",
                                                         "inverse:inf",
                                                         "table:",
                                                         "table:/nonexistent/rates",
                                                         "table:" + (dir / "three.txt").string(),
                                                         "table:" + (dir / "down.txt").string(),
                                                         "table:" + (dir / "empty.txt").string(),
                                                         "table:" + dir.string()}) {
    try {
      LrSchedule::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--lr-schedule", 0), 0u) << bad << ": " << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace headspec
