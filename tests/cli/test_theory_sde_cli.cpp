// `headspec theory --sde` and `sweep --engine sde` (docs/model.md §12, docs/cli.md): the
// sidecar says which equations ran, --stop-when-specialised ends a run where it split, and
// what the stochastic theory cannot do is refused with exit status 2 before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "csv_columns.hpp"

using namespace headspec::testing;

namespace {

const std::string kSde = "theory --mc-method sobol --sde --L 5 --mc 1024 --integrator heun --dt 0.5 --init-engine gram ";

// Each command is refused with exit status 2 and one line naming `flag`, and writes nothing.
void expect_refused(const std::vector<std::string>& commands, const std::string& flag,
                    const std::filesystem::path& out) {
  for (const std::string& cmd : commands) {
    const auto r = run_cli(cmd + " --out " + out.string());
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find(flag), std::string::npos) << cmd << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << cmd;
  }
}

}  // namespace

TEST(TheorySdeCli, SidecarNamesTheStochasticTheoryAndItsD) {
  const auto dir = fresh_dir("sde_sidecar");
  const auto out = dir / "t.csv";
  const auto r = run_cli(kSde + "--init-D 500 --T 4 --record-every 2 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
  EXPECT_EQ(meta["theory"]["sde"], true);
  EXPECT_EQ(meta["theory"]["init_D"], 500);
  EXPECT_EQ(parse(read_file(out)).values.size(), 3u);
}

TEST(TheorySdeCli, StopsWhenSpecialised) {
  const auto r = run_cli(kSde + "--init-D 100 --T 300 --record-every 1 --stop-when-specialised --delta 0.3");
  ASSERT_EQ(r.status, 0) << r.err;
  const Rows rows = parse(r.out);
  const auto& last = rows.values.back();
  ASSERT_LT(last[rows.column("t")], 300.0);
  EXPECT_GT(std::abs(last[rows.column("M_1_2")] - last[rows.column("M_2_2")]) / std::sqrt(2.0), 0.3);
}

TEST(TheorySdeCli, RefusalsNameTheirFlagAndWriteNothing) {
  const auto dir = fresh_dir("sde_refusals");
  const auto out = dir / "t.csv";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--integrator dopri5", "--integrator"},
      {"--integrator heun --mc-resample", "--mc-resample"},
      {"--integrator heun --mc-error", "--mc-error"},
      {"--integrator heun --init-D 3", "--init-D"},
      {"--integrator heun --stop-when-specialised --delta 0", "--delta"},
      {"--integrator heun --sde-mc 1", "--sde-mc"},
      {"--integrator heun --sde-mc -5", "--sde-mc"},
  };
  for (const auto& [flags, flag] : cases) {
    const auto r = run_cli("theory --mc-method sobol --sde --L 5 --mc 1024 --dt 0.5 --T 2 --record-every 1 " + flags + " --out " +
                           out.string());
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_NE(r.err.find(flag), std::string::npos) << flags << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << flags;
  }
}

// A D the dense initial state cannot hold: the refusal names the flag that would help
// (--init-engine gram), not simulate's --engine.
TEST(TheorySdeCli, TooLargeADForTheDenseStartNamesInitEngine) {
  const auto dir = fresh_dir("sde_large_D");
  const auto out = dir / "t.csv";
  for (const std::string cmd : {"sweep --engine sde --grid D=1000000000 --T 1", "theory --sde --init-D 1000000000 --T 1"}) {
    const auto r = run_cli(cmd + " --out " + out.string());
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find("use --init-engine gram"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << cmd;
  }
  const auto r = run_cli("simulate --D 1000000000 --T 1 --max-memory 1000 --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("use --engine gram"), std::string::npos) << r.err;
}

// sweep --engine sde: D is a grid key, and the summary has τ̃ = τ / ln D as for gram.
TEST(TheorySdeCli, SweepEngineSdeRunsEachPointAtItsD) {
  const auto dir = fresh_dir("sde_sweep");
  const auto out = dir / "s.csv", summary = dir / "sum.csv";
  const auto r = run_cli("sweep --engine sde --grid 'D=100,1000' --L 5 --mc 1024 --integrator heun --dt 0.5 --T 4 "
                         "--init-engine gram "
                         "--record-every 2 --runs 2 --out " + out.string() + " --summary " + summary.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const Rows s = parse(read_file(summary));
  ASSERT_EQ(s.values.size(), 4u);
  EXPECT_NO_THROW(s.column("tau_tilde_2"));
  // The point at D = 100 has 10 times the noise variance of D = 1000: its runs differ more
  // from the ODE's, which both points share (the same seeds, initial states drawn at each D).
  const auto theory = run_cli("theory --mc-method sobol --L 5 --mc 1024 --integrator heun --dt 0.5 --T 4 --record-every 2 --runs 2 "
                              "--init-engine gram --init-D 100");
  const auto sde = run_cli(kSde + "--init-D 100 --T 4 --record-every 2 --runs 2");
  ASSERT_EQ(theory.status, 0);
  const Rows a = parse(sde.out), b = parse(theory.out), sw = parse(read_file(out));
  EXPECT_EQ(a.values[2][a.column("M_1_2")], sw.values[2][sw.column("M_1_2")]);  // sweep point D = 100, run 0
  EXPECT_NE(a.values[2][a.column("M_1_2")], b.values[2][b.column("M_1_2")]);
}

// sweep --keep-R (theory and sde engines) runs the general path as theory --keep-R does: the
// same rows, R(0) from the draw and moving; the finite-D engines refuse it, naming it.
TEST(TheorySdeCli, SweepKeepsRAsTheoryDoes) {
  const auto dir = fresh_dir("sde_sweep_keep_R");
  const auto out = dir / "s.csv";
  const std::string flags = " --L 5 --mc 1024 --integrator heun --dt 0.5 --T 4 --init-engine gram --record-every 2 --runs 2";
  const auto r = run_cli("sweep --engine sde --keep-R --grid D=100" + flags + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto theory = run_cli("theory --mc-method sobol --sde --keep-R --init-D 100" + flags);
  ASSERT_EQ(theory.status, 0) << theory.err;
  const Rows sw = parse(read_file(out)), th = parse(theory.out);
  ASSERT_EQ(sw.values.size(), th.values.size());
  for (std::size_t i = 0; i < th.values.size(); ++i)
    for (const char* c : {"t", "loss", "M_1_2", "R_1", "R_2", "Q_1_1", "c_1"})
      EXPECT_EQ(sw.values[i][sw.column(c)], th.values[i][th.column(c)]) << c << " row " << i;
  EXPECT_NE(th.values[0][th.column("R_1")], 0.0) << "R(0) is the draw's";
  EXPECT_NE(th.values[1][th.column("R_1")], th.values[0][th.column("R_1")]) << "R moves";
  const nlohmann::json side = nlohmann::json::parse(read_file(dir / "s.csv.json"));
  EXPECT_EQ(side["theory"]["value_channel"], "sampled");
  const auto gram = run_cli("sweep --engine gram --keep-R --grid D=100 --T 1 --out " + (dir / "g.csv").string());
  EXPECT_EQ(gram.status, 2);
  EXPECT_NE(gram.err.find("--keep-R"), std::string::npos) << gram.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "g.csv"));
  std::filesystem::remove_all(dir);
}

// --sde-mc N: Σ from N plain samples instead of as many as the drift's. N equal to those is
// the default bit for bit; another N changes the noise's amplitude only (the drift, initial
// state and Brownian increments are the same, so the first step's drift part is shared and
// the rows differ, a little); the sidecar and the sweep's sidecar record it; without the
// stochastic theory it is refused, naming it, before anything is written.
TEST(TheorySdeCli, SdeMcSetsTheSamplesOfSigma) {
  const auto dir = fresh_dir("sde_mc");
  const std::string run = kSde + "--init-D 1000 --T 6 --record-every 2 --runs 2";
  const auto base = run_cli(run);
  const auto same = run_cli(run + " --sde-mc 1024");
  const auto fewer = run_cli(run + " --sde-mc 256 --out " + (dir / "t.csv").string());
  ASSERT_EQ(base.status, 0) << base.err;
  ASSERT_EQ(same.status, 0) << same.err;
  ASSERT_EQ(fewer.status, 0) << fewer.err;
  EXPECT_EQ(same.out, base.out);
  const Rows a = parse(base.out), b = parse(read_file(dir / "t.csv"));
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(a.values[0], b.values[0]) << "the same initial state";
  const double m12a = a.values[1][a.column("M_1_2")], m12b = b.values[1][b.column("M_1_2")];
  EXPECT_NE(m12a, m12b);
  EXPECT_LT(std::abs(m12a - m12b), 0.05 * std::abs(m12a) + 1e-3) << "the same drift and increments, Σ a little off";
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "t.csv.json"))["theory"]["sde_mc"], 256);
  const auto sweep = run_cli("sweep --engine sde --grid D=1000 --L 5 --mc 1024 --integrator heun --dt 0.5 --T 6 "
                             "--init-engine gram --record-every 2 --runs 2 --sde-mc 256 --out " +
                             (dir / "s.csv").string());
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const Rows sw = parse(read_file(dir / "s.csv"));
  EXPECT_EQ(sw.values[1][sw.column("M_1_2")], m12b) << "sweep --sde-mc runs what theory --sde-mc runs";
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "s.csv.json"))["theory"]["sde_mc"], 256);
  expect_refused({"theory --mc-method sobol --L 5 --mc 1024 --T 2 --sde-mc 256",
                  "sweep --engine theory --mc-method sobol --grid H=2 --mc 512 --T 1 --sde-mc 256",
                  "sweep --engine gram --grid H=2 --T 1 --sde-mc 256"},
                 "--sde-mc", dir / "x.csv");
  std::filesystem::remove_all(dir);
}

// --sde-reference-mc N°: the drift corrected along the unspecialised path of N° samples
// (docs/stochastic-theory.md §6). At D = 10^12 (no noise to speak of, and an initial state
// 10^-6 from the path) the corrected SDE of 1024 samples is the ODE of N° samples, which the
// uncorrected one is not; the sidecars record it, sweep runs what theory runs whatever the
// thread count, and it is refused without the stochastic theory or a symmetric method.
TEST(TheorySdeCli, SdeReferenceMcMakesTheDriftTheReferences) {
  const auto dir = fresh_dir("sde_reference");
  const std::string model = "--L 5 --integrator heun --dt 0.5 --init-engine gram --init-D 1000000000000 --T 20 "
                            "--record-every 10 ";
  const auto ode = run_cli("theory --mc-method sobol --mc 8192 " + model);
  const auto corrected = run_cli("theory --mc-method sobol --sde --mc 1024 --sde-reference-mc 8192 " + model + "--out " +
                                 (dir / "t.csv").string());
  const auto uncorrected = run_cli("theory --mc-method sobol --sde --mc 1024 " + model);
  ASSERT_EQ(ode.status, 0) << ode.err;
  ASSERT_EQ(corrected.status, 0) << corrected.err;
  ASSERT_EQ(uncorrected.status, 0) << uncorrected.err;
  const Rows o = parse(ode.out), c = parse(read_file(dir / "t.csv")), u = parse(uncorrected.out);
  double off_corrected = 0, off_uncorrected = 0;
  for (const char* col : {"loss", "M_1_1", "M_2_1", "Q_1_1", "Q_1_2", "c_1"}) {
    const double x = o.values[2][o.column(col)];
    off_corrected = std::max(off_corrected, std::abs(c.values[2][c.column(col)] - x));
    off_uncorrected = std::max(off_uncorrected, std::abs(u.values[2][u.column(col)] - x));
  }
  EXPECT_LT(off_corrected, 1e-4);
  EXPECT_GT(off_uncorrected, 1e-3) << "1024 samples must be visibly off for the test to mean anything";
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "t.csv.json"))["theory"]["sde_reference_mc"], 8192);
  const std::string sweep = "sweep --engine sde --grid D=1000000000000,2000 --L 5 --mc 1024 --integrator heun "
                            "--dt 0.5 --T 20 --init-engine gram --record-every 10 --runs 2 --sde-reference-mc 8192 ";
  const auto one = run_cli(sweep + "--threads 1 --out " + (dir / "s1.csv").string());
  const auto two = run_cli(sweep + "--threads 2 --out " + (dir / "s2.csv").string());
  ASSERT_EQ(one.status, 0) << one.err;
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(read_file(dir / "s1.csv"), read_file(dir / "s2.csv"));
  const Rows s = parse(read_file(dir / "s1.csv"));
  EXPECT_EQ(s.values[2][s.column("M_1_1")], c.values[2][c.column("M_1_1")]) << "sweep runs what theory runs";
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "s1.csv.json"))["theory"]["sde_reference_mc"], 8192);
  expect_refused({"theory --mc-method sobol --L 5 --mc 1024 --T 2 --sde-reference-mc 8192",
                  "theory --mc-method sobol --sde --L 5 --mc 1024 --dt 0.5 --T 2 --sde-reference-mc 1",
                  "theory --sde --L 5 --mc 1024 --dt 0.5 --T 2 --mc-method plain --sde-reference-mc 4096",
                  "sweep --engine gram --grid H=2 --T 1 --sde-reference-mc 4096"},
                 "--sde-reference-mc", dir / "x.csv");
  std::filesystem::remove_all(dir);
}
