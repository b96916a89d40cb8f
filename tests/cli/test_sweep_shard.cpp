// `headspec sweep --shard K/N --work-dir DIR` (docs/cluster.md "SLURM job arrays"): each shard
// computes its slice of the grid × runs into the work folder; the same command without --shard
// then writes the CSV and the summary of the unsharded sweep, byte for byte.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_helpers.hpp"
#include "sweep_counts.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

namespace {

// "shard K/N: M of T runs: C computed, R reused": {M, T, C, R}, or {-1, …}.
std::array<int, 4> shard_counts(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"(shard \d+/\d+: (\d+) of (\d+) runs: (\d+) computed, (\d+) reused)")))
    return {-1, -1, -1, -1};
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4])};
}

int task_files(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".task";
  return n;
}

const std::string kSweep =
    "sweep --engine gram --grid 'H=1:2;L=4,6' --D 400 --T 2 --record-every 0.5 --runs 3 --test-samples 100";
constexpr int kTasks = 2 * 2 * 3;

}  // namespace

TEST(SweepShard, ShardsMergedEqualTheUnshardedSweepByteForByte) {
  const auto dir = fresh_dir("sweep_shard");
  const auto work = dir / "work";
  const auto whole = run_cli(kSweep + " --out " + (dir / "whole.csv").string() + " --summary " +
                             (dir / "whole_summary.csv").string());
  ASSERT_EQ(whole.status, 0) << whole.err;

  // Five shards of 12 tasks (5 does not divide 12), each on its own, in reverse order.
  int stored = 0;
  for (int k = 5; k >= 1; --k) {
    const auto shard = run_cli(kSweep + " --work-dir " + work.string() + " --shard " + std::to_string(k) + "/5",
                               k % 2 ? "OMP_NUM_THREADS=1" : "OMP_NUM_THREADS=2");
    ASSERT_EQ(shard.status, 0) << shard.err;
    int mine = 0;
    for (int t = 0; t < kTasks; ++t) mine += t % 5 == k - 1;
    EXPECT_EQ(shard_counts(shard.err), (std::array{mine, kTasks, mine, 0})) << shard.err;
    stored += mine;
    EXPECT_EQ(task_files(work), stored);
  }
  EXPECT_FALSE(fs::exists(dir / "merged.csv"));

  // A shard run again reuses its runs.
  const auto again = run_cli(kSweep + " --work-dir " + work.string() + " --shard 2/5");
  EXPECT_EQ(shard_counts(again.err), (std::array{3, kTasks, 0, 3})) << again.err;

  // The merge: nothing left to compute, and the unsharded sweep's bytes.
  const auto merge = run_cli(kSweep + " --work-dir " + work.string() + " --out " + (dir / "merged.csv").string() +
                             " --summary " + (dir / "merged_summary.csv").string());
  ASSERT_EQ(merge.status, 0) << merge.err;
  EXPECT_EQ(counts(merge.err), (std::array{kTasks, 0, kTasks})) << merge.err;
  EXPECT_EQ(read_file(dir / "merged.csv"), read_file(dir / "whole.csv"));
  EXPECT_EQ(read_file(dir / "merged_summary.csv"), read_file(dir / "whole_summary.csv"));
  EXPECT_FALSE(read_file(dir / "whole.csv").empty());
}

TEST(SweepShard, BadShardExitsTwoAndWritesNothing) {
  const auto dir = fresh_dir("sweep_shard_bad");
  const std::string work = " --work-dir " + (dir / "w").string();
  for (const std::string& flags : {work + " --shard 0/3", work + " --shard 4/3", work + " --shard 3", work +
                                   " --shard 1/0", work + " --shard a/b", work + " --shard 1/2/3",
                                   std::string(" --shard 1/3"), work + " --shard 1/3 --out " + (dir / "o.csv").string(),
                                   work + " --shard 1/3 --summary " + (dir / "s.csv").string()}) {
    const auto r = run_cli(kSweep + flags);
    EXPECT_EQ(r.status, 2) << flags << ": " << r.err;
    EXPECT_EQ(r.err.rfind("headspec: error: --shard: ", 0), 0u) << flags << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(fs::is_empty(dir)) << flags;
  }
}
