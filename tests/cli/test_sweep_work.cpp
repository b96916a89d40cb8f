// `headspec sweep --work-dir` (docs/cluster.md): the bytes of a trajectory, and the work
// folder of a sweep killed with SIGKILL and started again, compared byte for byte with the
// plain sweep.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <thread>

#include "cli_helpers.hpp"
#include "headspec/sweep.hpp"
#include "sweep_counts.hpp"

using namespace headspec;
using namespace headspec::testing;
namespace fs = std::filesystem;

namespace {

Trajectory sample_trajectory() {
  Trajectory tr;
  tr.diverged = true;
  tr.diverged_at = 2.5;
  for (int k = 0; k < 3; ++k) {
    Record r;
    r.run = 7;
    r.t = 0.5 * k;
    r.loss = k == 2 ? std::numeric_limits<double>::quiet_NaN() : 0.1 + 1e-17 * k;
    r.op.M = Eigen::MatrixXd::Random(2, 3);
    r.op.R = Eigen::VectorXd::Random(2);
    r.op.Q = Eigen::MatrixXd::Random(2, 2);
    if (k != 1) r.op.c = Eigen::VectorXd::Random(2);  // an empty vector too
    tr.records.push_back(r);
  }
  tr.records[1].op.M(1, 2) = -std::numeric_limits<double>::infinity();
  tr.records[0].op.M(0, 0) = std::nextafter(1.0, 2.0);
  return tr;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Eigen::Index i = 0; i < a.size(); ++i)
    if (!same_bits(a.data()[i], b.data()[i])) return false;
  return true;
}

int task_files(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().extension() == ".task";
  return n;
}

}  // namespace

TEST(SweepWork, TrajectoryBytesRoundTripExactly) {
  const Trajectory tr = sample_trajectory();
  const std::string bytes = serialize_trajectory(tr);
  const Trajectory back = deserialize_trajectory(bytes);
  EXPECT_EQ(back.diverged, tr.diverged);
  EXPECT_TRUE(same_bits(back.diverged_at, tr.diverged_at));
  ASSERT_EQ(back.records.size(), tr.records.size());
  for (std::size_t k = 0; k < tr.records.size(); ++k) {
    const Record &a = tr.records[k], &b = back.records[k];
    EXPECT_EQ(a.run, b.run);
    EXPECT_TRUE(same_bits(a.t, b.t));
    EXPECT_TRUE(same_bits(a.loss, b.loss));
    EXPECT_TRUE(same_bits(a.op.M, b.op.M));
    EXPECT_TRUE(same_bits(a.op.R, b.op.R));
    EXPECT_TRUE(same_bits(a.op.Q, b.op.Q));
    EXPECT_TRUE(same_bits(a.op.c, b.op.c));
  }
  EXPECT_EQ(serialize_trajectory(back), bytes);
  // Every truncation, and a trailing byte, are refused rather than read as a shorter run.
  for (std::size_t n = 0; n < bytes.size(); n += 7)
    EXPECT_THROW(deserialize_trajectory(std::string_view(bytes).substr(0, n)), std::runtime_error) << n;
  EXPECT_THROW(deserialize_trajectory(bytes + "x"), std::runtime_error);
}

TEST(SweepWork, FolderKeepsResultsUnderTheirKeyOnly) {
  const auto dir = fresh_dir("sweep_workdir");
  SweepWorkDir work(dir.string());
  const Trajectory tr = sample_trajectory();
  EXPECT_FALSE(work.load("key a").has_value());
  work.store("key a", tr);
  const auto back = work.load("key a");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(serialize_trajectory(*back), serialize_trajectory(tr));
  EXPECT_FALSE(work.load("key b").has_value());
  EXPECT_NE(work.file_of("key a"), work.file_of("key b"));
  EXPECT_EQ(work.count_other_files({"key a"}), 0u);
  EXPECT_EQ(work.count_other_files({"key b"}), 1u);
  // A file under key b's name that holds key a's result, or a damaged one: absent, with a reason.
  fs::copy_file(work.file_of("key a"), work.file_of("key b"));
  std::string problem;
  EXPECT_FALSE(work.load("key b", &problem).has_value());
  EXPECT_NE(problem.find("another task's key"), std::string::npos) << problem;
  fs::resize_file(work.file_of("key a"), fs::file_size(work.file_of("key a")) - 1);
  problem.clear();
  EXPECT_FALSE(work.load("key a", &problem).has_value());
  EXPECT_NE(problem.find("truncated"), std::string::npos) << problem;
  // One flipped bit in the records, which still parse: refused by the checksum.
  work.store("key a", tr);
  std::string bytes = read_file(work.file_of("key a"));
  bytes[bytes.size() - 20] ^= 0x01;
  std::ofstream(work.file_of("key a"), std::ios::binary) << bytes;
  problem.clear();
  EXPECT_FALSE(work.load("key a", &problem).has_value());
  EXPECT_NE(problem.find("SHA-256"), std::string::npos) << problem;
}

TEST(SweepWork, KilledSweepRestartedRedoesNoFinishedRun) {
  const auto dir = fresh_dir("sweep_kill");
  const auto work = dir / "work", out = dir / "rows.csv", sum = dir / "summary.csv";
  // 2 × 2 points × 6 runs, each some tens of milliseconds, so that the kill lands mid-sweep.
  const std::string args = "sweep --engine gram --grid 'H=1:2;L=4,6' --D 4000 --T 6 --record-every 0.5 --runs 6 "
                           "--test-samples 100 --out " + out.string() + " --summary " + sum.string() +
                           " --work-dir " + work.string();
  const int total = 2 * 2 * 6;
  auto outputs = [&] { return std::array{read_file(out), read_file(out.string() + ".json"), read_file(sum)}; };

  // The reference: the same command, uninterrupted, from an empty work folder.
  const auto whole = run_cli(args, "OMP_NUM_THREADS=2");
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_EQ(counts(whole.err), (std::array{total, total, 0})) << whole.err;
  const auto reference = outputs();
  fs::remove_all(work);
  for (const auto& f : {out, fs::path(out.string() + ".json"), sum}) fs::remove(f);

  // Started on one thread and killed with SIGKILL once a few runs are on disk.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string cmd = "exec env OMP_NUM_THREADS=1 " + std::string(HEADSPEC_BINARY) + " " + args + " 2>/dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto start = std::chrono::steady_clock::now();
  int raw = 0;
  bool exited = false;
  while (task_files(work) < 3 && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    if (waitpid(pid, &raw, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &raw, 0);
  }
  ASSERT_TRUE(WIFSIGNALED(raw) && WTERMSIG(raw) == SIGKILL) << "the sweep ended before it was killed";
  const int finished = task_files(work);
  ASSERT_GE(finished, 3);
  ASSERT_LT(finished, total) << "killed too late to test a resume";
  EXPECT_FALSE(fs::exists(out)) << "outputs are written whole at the end, or not at all";

  // Started again with the same command: exactly the runs on disk are reused.
  const auto resumed = run_cli(args, "OMP_NUM_THREADS=2");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto c = counts(resumed.err);
  EXPECT_EQ(c[0], total) << resumed.err;
  EXPECT_EQ(c[2], finished) << resumed.err;
  EXPECT_EQ(c[1] + c[2], total) << resumed.err;
  const auto again = outputs();
  EXPECT_EQ(again[0], reference[0]) << "tidy CSV";
  EXPECT_EQ(again[1], reference[1]) << "sidecar";
  EXPECT_EQ(again[2], reference[2]) << "summary";

  // Once more: everything is reused. With a changed parameter nothing is, and the
  // results of the first parameters are counted as other files and left alone.
  EXPECT_EQ(counts(run_cli(args).err), (std::array{total, 0, total}));
  const auto changed = run_cli(args + " --seed 5");
  ASSERT_EQ(changed.status, 0) << changed.err;
  EXPECT_EQ(counts(changed.err), (std::array{total, total, 0})) << changed.err;
  EXPECT_NE(changed.err.find(std::to_string(total) + " other files there"), std::string::npos) << changed.err;
  EXPECT_NE(read_file(out), reference[0]);
}

TEST(SweepWork, BadWorkDirExitsTwoAndWritesNothing) {
  const auto dir = fresh_dir("sweep_bad_work");
  const auto out = dir / "x.csv", file = dir / "plain";
  { std::ofstream(file) << "x"; }
  for (const std::string& work : {file.string(), (dir / "no" / "such").string()}) {
    const auto r = run_cli("sweep --engine gram --grid 'H=1:2' --D 100 --T 1 --out " + out.string() + " --work-dir " +
                           work);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("headspec: error: --work-dir: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // Another flag at fault: the work folder is not created either.
  const auto r = run_cli("sweep --engine gram --grid 'H=0' --T 1 --work-dir " + (dir / "w").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(fs::exists(dir / "w"));
}
