// `headspec sweep` (docs/cli.md): results independent of the thread count
// and of the grid's order, summary specialisation times equal to the detector (docs/model.md
// §10) on the tidy rows, and the stop rule of --stop-when-specialised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/sweep.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

// A CSV table (RFC 4180 quotes) as a header and rows of named cells.
struct Table {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
      else if (ch == '"') quoted = false;
      else cells.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else {
      cells.back() += ch;
    }
  }
  return cells;
}

Table parse_csv(const std::string& text) {
  Table t;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) return t;
  t.header = cells_of(line);
  while (std::getline(in, line)) {
    const auto cells = cells_of(line);
    EXPECT_EQ(cells.size(), t.header.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; k < cells.size() && k < t.header.size(); ++k) row[t.header[k]] = cells[k];
    t.rows.push_back(row);
  }
  return t;
}

// Rows keyed by (grid values in key-name order, run, t): the canonical order.
std::map<std::string, std::map<std::string, std::string>> canonical(const Table& t,
                                                                    const std::vector<std::string>& keys) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& row : t.rows) {
    std::string id;
    for (const auto& k : keys) id += k + "=" + row.at(k) + ";";
    id += "run=" + row.at("run") + ";t=" + row.at("t");
    EXPECT_TRUE(out.emplace(id, row).second) << "duplicate row " << id;
  }
  return out;
}

bool same_number(const std::string& a, double b) {
  if (a == "nan") return std::isnan(b);
  return std::stod(a) == b;
}

}  // namespace

TEST(SweepCli, SameRowsWithOneAndTwoThreadsAndWithTheGridReversed) {
  const auto dir = fresh_dir("sweep_threads");
  const std::string common = " --engine gram --D 200 --L 4 --T 2 --record-every 0.5 --runs 3 --test-samples 50";
  auto sweep = [&](const std::string& grid, const std::string& name, const std::string& env) {
    const auto out = dir / (name + ".csv"), sum = dir / (name + "_summary.csv");
    const auto r = run_cli("sweep --grid '" + grid + "'" + common + " --out " + out.string() + " --summary " +
                               sum.string(),
                           env);
    EXPECT_EQ(r.status, 0) << r.err;
    return std::pair{read_file(out), read_file(sum)};
  };
  const auto one = sweep("activation=softmax,softmax1;H=1:2;nu=2,2|1", "one", "OMP_NUM_THREADS=1");
  const auto two = sweep("activation=softmax,softmax1;H=1:2;nu=2,2|1", "two", "OMP_NUM_THREADS=2");
  // Same bytes, tidy rows and summary, whatever the number of threads.
  EXPECT_EQ(one.first, two.first);
  EXPECT_EQ(one.second, two.second);
  // The grid written in the opposite order (keys and values reversed): after sorting the
  // rows by (activation, H, nu, run, t) and matching columns by name, every cell is equal.
  const auto rev = sweep("nu=1|2,2;H=2,1;activation=softmax1,softmax", "rev", "OMP_NUM_THREADS=2");
  const std::vector<std::string> keys = {"activation", "H", "nu"};
  for (auto [a, b] : {std::pair{one.first, rev.first}, std::pair{one.second, rev.second}}) {
    const auto ta = parse_csv(a), tb = parse_csv(b);
    const auto ca = canonical(ta, keys), cb = canonical(tb, keys);
    EXPECT_EQ(ca.size(), ta.rows.size());
    EXPECT_EQ(ca, cb);
  }
  // 8 points × 3 runs × 5 records; H = 1 points leave the columns of head 2 empty.
  const auto t = parse_csv(one.first);
  EXPECT_EQ(t.rows.size(), 8u * 3 * 5);
  EXPECT_EQ(t.rows[0].at("H"), "1");
  EXPECT_EQ(t.rows[0].at("M_2_1"), "");
  EXPECT_EQ(t.rows[0].at("nu"), "2,2");
  EXPECT_NE(t.rows[0].at("M_1_2"), "");
  EXPECT_EQ(t.rows[15].at("nu"), "1");  // the second point (3 runs × 5 records later)
  EXPECT_EQ(t.rows[15].at("M_1_2"), "");  // F = 1
  // The first point's runs are `simulate`'s runs with the same flags.
  const auto sim = run_cli("simulate --activation softmax --H 1 --nu 2,2" + common);
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto s = parse_csv(sim.out);
  ASSERT_EQ(s.rows.size(), 15u);
  // (a sweep's rows carry the values, not simulate's trailing loss_se)
  ASSERT_EQ(s.header.back(), "loss_se");
  for (std::size_t i = 0; i < 15; ++i) {
    for (const auto& col : s.header) {
      if (col != "loss_se") {
        EXPECT_EQ(s.rows[i].at(col), t.rows[i].at(col)) << col;
      }
    }
  }
}

TEST(SweepCli, TheoryEngineIsThreadIndependent) {
  const std::string cmd = "sweep --engine theory --mc-method sobol --grid 'activation=softmax,softmax1' --mc 300 --dt 0.25 --T 1 "
                          "--init-D 500 --runs 2 --L 4";
  const auto one = run_cli(cmd, "OMP_NUM_THREADS=1"), two = run_cli(cmd, "OMP_NUM_THREADS=2");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(parse_csv(one.out).rows.size(), 2u * 2 * 2);
}

TEST(SweepCli, SummaryTimesAreTheDetectorOnTheTidyRows) {
  const auto dir = fresh_dir("sweep_tau");
  const auto out = dir / "rows.csv", sum = dir / "summary.csv";
  const auto r = run_cli("sweep --engine gram --grid 'D=100,1000;H=2,3' --L 5 --T 20 --record-every 0.5 --runs 3 "
                         "--test-samples 20 --delta 0.2 --out " + out.string() + " --summary " + sum.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = parse_csv(read_file(out)), summary = parse_csv(read_file(sum));
  ASSERT_EQ(summary.rows.size(), 12u);
  int specialised = 0;
  for (const auto& s : summary.rows) {
    std::vector<Record> records;
    std::map<std::string, std::string> last;
    for (const auto& row : rows.rows)
      if (row.at("D") == s.at("D") && row.at("H") == s.at("H") && row.at("run") == s.at("run")) {
        last = row;
        const int H = std::stoi(row.at("H"));
        Record rec;
        rec.t = std::stod(row.at("t"));
        rec.op.M.resize(H, 2);
        for (int h = 0; h < H; ++h)
          for (int f = 0; f < 2; ++f) rec.op.M(h, f) = std::stod(row.at("M_" + std::to_string(h + 1) + "_" + std::to_string(f + 1)));
        records.push_back(rec);
      }
    ASSERT_EQ(records.size(), 41u);
    EXPECT_EQ(s.at("t"), "20");
    for (const auto& col : rows.header) EXPECT_EQ(s.at(col), last.at(col)) << "final value of " << col;
    const auto tau = specialisation_times(records, 0.2);
    const double lnD = std::log(std::stod(s.at("D")));
    for (int f = 0; f < 2; ++f) {
      const std::string k = std::to_string(f + 1);
      EXPECT_TRUE(same_number(s.at("tau_" + k), tau[f])) << s.at("tau_" + k) << " vs " << tau[f];
      EXPECT_TRUE(same_number(s.at("tau_tilde_" + k), tau[f] / lnD));
      specialised += std::isfinite(tau[f]);
    }
  }
  EXPECT_GT(specialised, 0) << "the comparison should include finite times";
}

TEST(SweepCli, StopRuleStopsAtTheFirstRecordAboveDelta) {
  // flip ν = (2, 8): direction 1 has mean √2, direction 2 mean zero; the run must stop at
  // the first record at which direction 2's spread exceeds δ, with the rows of the full run.
  // (At D = 200 these four runs specialise at t = 3.5, 53.5, 7.5 and 33.)
  const std::string cmd = "simulate --engine gram --D 200 --nu 2,8 --L 5 --H 2 --T 80 --record-every 0.5 --runs 4 "
                          "--test-samples 20 --delta 0.2";
  const auto full = run_cli(cmd), stopped = run_cli(cmd + " --stop-when-specialised");
  ASSERT_EQ(full.status, 0) << full.err;
  ASSERT_EQ(stopped.status, 0) << stopped.err;
  const auto f = parse_csv(full.out), s = parse_csv(stopped.out);
  ASSERT_LT(s.rows.size(), f.rows.size());
  for (int run = 0; run < 4; ++run) {
    std::vector<std::map<std::string, std::string>> fr, sr;
    for (const auto& row : f.rows)
      if (row.at("run") == std::to_string(run)) fr.push_back(row);
    for (const auto& row : s.rows)
      if (row.at("run") == std::to_string(run)) sr.push_back(row);
    // The first record whose spread along direction 2 exceeds δ, from the full run.
    std::size_t first = fr.size();
    for (std::size_t i = 0; i < fr.size() && first == fr.size(); ++i) {
      Eigen::MatrixXd M(2, 2);
      M << std::stod(fr[i].at("M_1_1")), std::stod(fr[i].at("M_1_2")), std::stod(fr[i].at("M_2_1")),
          std::stod(fr[i].at("M_2_2"));
      if (head_spread(M, 1) > 0.2) first = i;
    }
    ASSERT_LT(first, fr.size()) << "run " << run << " never specialised by T = 80";
    ASSERT_EQ(sr.size(), first + 1) << "run " << run;
    for (std::size_t i = 0; i < sr.size(); ++i) EXPECT_EQ(sr[i], fr[i]);
  }
}

TEST(SweepCli, BadGridExitsTwoAndWritesNothing) {
  const auto dir = fresh_dir("sweep_bad");
  const auto out = dir / "x.csv", sum = dir / "s.csv";
  for (const std::string grid : {"H=0:2", "Hx=1", "nu=1|-1", "D=4", "H=3:1"}) {
    const auto r = run_cli("sweep --engine gram --grid '" + grid + "' --T 1 --out " + out.string() + " --summary " +
                           sum.string());
    EXPECT_EQ(r.status, 2) << grid;
    EXPECT_NE(r.err.find("--grid"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(sum));
  }
  EXPECT_EQ(run_cli("sweep --engine theory --mc-method sobol --grid 'D=100' --T 1").status, 2);
  EXPECT_EQ(run_cli("sweep --engine sde --grid 'H=2' --integrator dopri5 --T 1").status, 2);
  EXPECT_EQ(run_cli("sweep --engine sde --grid 'D=2' --T 1").status, 2);  // below F + 1 + H
  EXPECT_EQ(run_cli("sweep --engine warp --grid 'H=2' --T 1").status, 2);
}
