// Learning-rate schedules and gradient flow on the command line (docs/model.md §4, §6;
// docs/cli.md "--lr-schedule").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "csv_columns.hpp"
#include "mnist_fixture.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

namespace {

// The engines, each a short run: dense, gram (fixed-size and general step), theory, SDE.
struct EngineRun {
  const char* name;
  std::string args;
};

std::vector<EngineRun> engine_runs() {
  return {{"dense", "simulate --engine dense --D 300 --L 4 --T 8 --record-every 1 --test-samples 300"},
          {"gram", "simulate --engine gram --D 300 --L 4 --T 8 --record-every 1 --test-samples 300"},
          {"gram batch", "simulate --engine gram --D 300 --L 4 --batch 2 --T 8 --record-every 1 --test-samples 300"},
          {"theory", "theory --mc-method sobol --L 4 --mc 2000 --dt 0.25 --T 8 --record-every 1 --init-D 300"},
          {"sde", "theory --mc-method sobol --sde --init-D 300 --L 4 --mc 2000 --integrator heun --dt 0.25 --T 8 --record-every 1"}};
}

std::string csv_of(const std::string& args, const fs::path& out) {
  const auto r = run_cli(args + " --progress off --out " + out.string());
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return read_file(out);
}

nlohmann::json sidecar_of(const fs::path& out) {
  auto j = nlohmann::json::parse(read_file(out.string() + ".json"));
  j.erase("argv");
  return j;
}

}  // namespace

// `constant` is the run without the flag, byte for byte, CSV and sidecar.
TEST(LrScheduleCli, ConstantIsByteIdenticalToNoSchedule) {
  const auto dir = fresh_dir("lr_constant");
  for (const auto& e : engine_runs()) {
    SCOPED_TRACE(e.name);
    const std::string a = csv_of(e.args, dir / "a.csv"), b = csv_of(e.args + " --lr-schedule constant", dir / "b.csv");
    EXPECT_EQ(a, b);
    EXPECT_EQ(sidecar_of(dir / "a.csv"), sidecar_of(dir / "b.csv"));
  }
  fs::remove_all(dir);
}

// Every engine applies the factor at the same step: η = 2 with g = ½ from t = 0 is η = 1
// exactly (the products are exact), and a step at t = 4 leaves the records before it as the
// constant run's and changes every later one.
TEST(LrScheduleCli, EveryEngineTakesTheFactorAtTheSameTime) {
  const auto dir = fresh_dir("lr_same_time");
  std::vector<EngineRun> runs = engine_runs();
  const std::string mnist = real_mnist_dir();
  if (!mnist.empty())
    runs.push_back({"mnist", "mnist --data " + mnist + " --H 3 --L 4 --T 4 --record-every 0.5 --test-samples 100"});
  for (const auto& e : runs) {
    SCOPED_TRACE(e.name);
    const bool is_mnist = std::string(e.name) == "mnist";
    const std::string one = csv_of(e.args + " --lr 1", dir / "one.csv");
    EXPECT_EQ(csv_of(e.args + " --lr 2 --lr-schedule step:0,0.5", dir / "half.csv"), one);
    const auto with_step = parse(
        csv_of(e.args + (is_mnist ? " --lr-schedule step:2,0.25" : " --lr-schedule step:4,0.25"), dir / "step.csv"));
    const auto constant = parse(one);
    const double change = is_mnist ? 2 : 4;
    // SGD: a record at t is the state before step tD/B, which the factor from t on does not
    // touch. The theory: the last stage of the step ending at t is taken at t, with the new factor.
    const bool theory = e.args.rfind("theory", 0) == 0;
    ASSERT_EQ(with_step.values.size(), constant.values.size());
    const std::size_t t = constant.column("t"), loss = constant.column("loss"), q = constant.column("Q_1_1");
    for (std::size_t i = 0; i < constant.values.size(); ++i) {
      SCOPED_TRACE(constant.values[i][t]);
      const double tt = constant.values[i][t];
      if (theory ? tt < change : tt <= change) {
        EXPECT_EQ(with_step.values[i], constant.values[i]);
      } else {
        EXPECT_NE(with_step.values[i][q], constant.values[i][q]);
        EXPECT_NE(with_step.values[i][loss], constant.values[i][loss]);
      }
    }
    const auto meta = nlohmann::json::parse(read_file((dir / "step.csv").string() + ".json"));
    EXPECT_EQ(meta["model"]["lr_schedule"], is_mnist ? "step:2,0.25" : "step:4,0.25");
  }
  fs::remove_all(dir);
}

// A table's rows are part of the run: the sidecar's model object records them (and with it a
// checkpoint's identity), and other rows in the same file give another run.
TEST(LrScheduleCli, TableRowsAreRecordedInTheSidecar) {
  const auto dir = fresh_dir("lr_table");
  const fs::path table = dir / "g.txt", out = dir / "o.csv";
  std::ofstream(table) << "0 1\n4 0.5\n";
  const std::string args =
      "simulate --engine gram --D 300 --L 4 --T 8 --record-every 1 --test-samples 100 "
      "--lr-schedule table:" +
      table.string();
  const std::string first = csv_of(args, out);
  const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
  ASSERT_EQ(meta["model"]["lr_schedule_table"].size(), 2u);
  EXPECT_EQ(meta["model"]["lr_schedule_table"][1][1], 0.5);
  std::ofstream(table) << "0 1\n4 0.25\n";
  EXPECT_NE(csv_of(args, dir / "p.csv"), first) << "the table's new rows must change the run";
  fs::remove_all(dir);
}

TEST(LrScheduleCli, BadSchedulesAreRefusedBeforeAnythingIsWritten) {
  const auto dir = fresh_dir("lr_bad");
  const fs::path out = dir / "o.csv";
  std::ofstream(dir / "bad.txt") << "0 1\n0 2\n";
  const std::vector<std::string> commands = {"simulate --engine dense --D 100 --T 1",
                                             "simulate --engine gram --D 100 --T 1",
                                             "theory --mc-method sobol --T 1 --mc 1000",
                                             "theory --mc-method sobol --sde --T 1 --mc 1000",
                                             "sweep --engine theory --mc-method sobol --grid L=3,4 --T 1 --mc 1000",
                                             "sweep --engine gram --grid L=3,4 --T 1 --D 100"};
  const std::vector<std::string> schedules = {"''",
                                              "linear:3",
                                              "inverse:0",
                                              "power:5",
                                              "step:3,-1",
                                              "step:4,0.5,2,0.1",
                                              "table:" + (dir / "missing.txt").string(),
                                              "table:" + (dir / "bad.txt").string(),
                                              "table:" + dir.string()};
  for (const auto& c : commands)
    for (const auto& s : schedules) {
      SCOPED_TRACE(c + " --lr-schedule " + s);
      const auto r = run_cli(c + " --lr-schedule " + s + " --out " + out.string());
      EXPECT_EQ(r.status, 2) << r.err;
      EXPECT_EQ(count_lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find("--lr-schedule"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(out));
      EXPECT_FALSE(fs::exists(out.string() + ".json"));
    }
  // In a sweep's grid, the bad value is named with its point.
  const auto grid =
      run_cli("sweep --engine theory --mc-method sobol --grid 'lr-schedule=inverse:10|power:3' --T 1 --mc 1000 --out " + out.string());
  EXPECT_EQ(grid.status, 2) << grid.err;
  EXPECT_NE(grid.err.find("lr-schedule"), std::string::npos) << grid.err;
  EXPECT_FALSE(fs::exists(out));
  // --flow refuses a schedule and the stochastic theory; linearise refuses a schedule.
  for (const auto& [args, flag] :
       {std::pair{std::string("theory --mc-method sobol --flow --lr-schedule inverse:5 --T 1 --mc 1000"), "--flow"},
        std::pair{std::string("theory --mc-method sobol --flow --sde --T 1 --mc 1000"), "--flow"},
        std::pair{std::string("sweep --engine theory --mc-method sobol --flow --grid 'lr-schedule=constant|inverse:5' --T 1 --mc 1000"),
                  "--flow"},
        std::pair{std::string("sweep --engine gram --flow --grid L=3,4 --T 1 --D 100"), "--flow"},
        std::pair{std::string("linearise --mc-method sobol --lr-schedule inverse:5 --mc 1000"), "--lr-schedule"}}) {
    SCOPED_TRACE(args);
    const auto r = run_cli(args + " --out " + out.string());
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  fs::remove_all(dir);
}

// Gradient flow is the limit η → 0 at fixed τ = ηt (docs/model.md §6): the theory at η with
// --T, --dt, --record-every divided by η (and η_c/η kept) approaches the --flow run like O(η) (the η² term
// is η times the drift per unit τ), so the gap shrinks tenfold from η = 10^-2 to 10^-3.
TEST(LrScheduleCli, GradientFlowIsTheLimitOfSmallSteps) {
  const auto dir = fresh_dir("lr_flow");
  const std::string base = "theory --mc-method sobol --L 4 --mc 3000 --init-D 400";
  const auto flow =
      parse(csv_of(base + " --flow --lr 1 --readout-lr 0.5 --T 12 --dt 0.2 --record-every 2", dir / "flow.csv"));
  auto gap = [&](const std::string& scaled) {
    const auto r = parse(csv_of(base + scaled, dir / "lr.csv"));
    EXPECT_EQ(r.values.size(), flow.values.size());
    double worst = 0;
    for (std::size_t i = 0; i < std::min(r.values.size(), flow.values.size()); ++i)
      for (const char* col : {"loss", "M_1_1", "M_2_2", "Q_1_1", "Q_1_2", "c_1"})
        worst = std::max(worst, std::abs(r.values[i][r.column(col)] - flow.values[i][flow.column(col)]));
    return worst;
  };
  const double coarse = gap(" --lr 0.01 --readout-lr 0.005 --T 1200 --dt 20 --record-every 200"),
               fine = gap(" --lr 0.001 --readout-lr 0.0005 --T 12000 --dt 200 --record-every 2000");
  // The flow run moves the state by O(1): the limit is not trivially met.
  const std::size_t q = flow.column("M_1_1");
  EXPECT_GT(std::abs(flow.values.back()[q] - flow.values.front()[q]), 0.05);
  EXPECT_LT(fine, 0.01) << "coarse " << coarse;
  EXPECT_GT(coarse / fine, 5.0) << "coarse " << coarse << ", fine " << fine;
  EXPECT_LT(coarse / fine, 20.0) << "coarse " << coarse << ", fine " << fine;
  const auto meta = nlohmann::json::parse(read_file((dir / "flow.csv").string() + ".json"));
  EXPECT_EQ(meta["theory"]["flow"], true);
  fs::remove_all(dir);
}
