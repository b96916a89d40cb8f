// --checkpoint / --resume from the command line (docs/checkpoints.md): a run interrupted by
// SIGINT at a random moment exits with status 130 and leaves a checkpoint; resumed, it writes
// the very bytes of an uninterrupted run; a damaged checkpoint, or one written with other
// flags, is refused with one line and status 2 before anything is written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli_helpers.hpp"
#include "headspec/checkpoint.hpp"
#include "mnist_fixture.hpp"

using headspec::testing::count_lines;
using headspec::testing::fresh_dir;
using headspec::testing::path_case_samples;
using headspec::testing::read_file;
using headspec::testing::run_cli;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_args(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Launches headspec ARGS (stdout and stderr to files in dir), waits until `checkpoint`
// exists, then 0–`max_delay_ms` ms more (drawn from a generator seeded by the arguments, so
// that a failing case, whose message gives delay_ms, is replayed with the same delay),
// sends `sig` and returns the exit status (-1 if it did not exit normally).
int interrupt_run(const std::string& args, const fs::path& checkpoint, const fs::path& dir, int max_delay_ms,
                  std::string& err, int& delay_ms, int sig = SIGINT) {
  std::mt19937 gen(static_cast<unsigned>(std::hash<std::string>{}(args)));
  delay_ms = static_cast<int>(gen() % static_cast<unsigned>(max_delay_ms + 1));
  std::vector<std::string> words = split_args(args);
  words.insert(words.begin(), HEADSPEC_BINARY);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const std::string err_path = (dir / "interrupted.err").string(), out_path = (dir / "interrupted.out").string();
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int raw = 0;
  bool exited = false;
  // Until the first periodic checkpoint is there (or the run ended, which the caller reports).
  for (int i = 0; i < 60000 && !fs::exists(checkpoint); ++i) {
    if (waitpid(pid, &raw, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!exited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, sig);
    waitpid(pid, &raw, 0);
  }
  err = read_file(err_path);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// The sidecar less the fields that record how the run was made (argv, resumed_from).
nlohmann::json sidecar_without_resume(const fs::path& csv) {
  nlohmann::json j = nlohmann::json::parse(read_file(csv.string() + ".json"));
  j.erase("argv");
  j.erase("resumed_from");
  return j;
}

// The whole contract for one command line: `args` must run for a second or so, with
// --checkpoint-every `every` small against its T.
void check_interrupt_and_resume(const std::string& name, const std::string& args, const std::string& every,
                                const std::string& other_flags, int sig = SIGINT) {
  SCOPED_TRACE(name);
  const auto dir = fresh_dir("ckpt_cli_" + name);
  const fs::path plain = dir / "plain.csv", resumed = dir / "resumed.csv", ckpt = dir / "run.ckpt";
  const auto ref = run_cli(args + " --out " + plain.string());
  ASSERT_EQ(ref.status, 0) << ref.err;

  std::string err;
  int delay = 0;
  const int status = interrupt_run(args + " --out " + resumed.string() + " --checkpoint " + ckpt.string() +
                                       " --checkpoint-every " + every,
                                   ckpt, dir, 100, err, delay, sig);
  SCOPED_TRACE(std::string(sig == SIGINT ? "SIGINT " : "SIGTERM ") + std::to_string(delay) +
               " ms after the first checkpoint");
  ASSERT_EQ(status, 130) << "the run must still be going when interrupted (make it longer?)\n" << err;
  EXPECT_NE(err.find("--resume"), std::string::npos) << err;
  ASSERT_TRUE(fs::exists(ckpt));
  EXPECT_FALSE(fs::exists(resumed)) << "an interrupted run writes no output";
  const std::string good = read_file(ckpt);

  // Damaged checkpoints: a byte flipped at random, truncated, of another format version; and
  // one resumed with other flags. Each is refused with one line, nothing written, the file kept.
  // The flipped bit: a fixed seed, so that a failure can be replayed.
  constexpr unsigned kFlipSeed = 20261201;
  SCOPED_TRACE(::testing::Message() << "flipped-bit seed " << kFlipSeed);
  std::mt19937 gen(kFlipSeed);
  std::string flipped = good;
  const std::size_t at = gen() % flipped.size();
  flipped[at] = static_cast<char>(flipped[at] ^ (1 << (gen() % 8)));
  std::string other_version = good;
  const std::string format_line = "format " + std::to_string(headspec::kCheckpointFormat) + "\n";
  ASSERT_NE(other_version.find(format_line), std::string::npos) << good.substr(0, 40);
  other_version.replace(other_version.find(format_line), format_line.size(),
                        "format " + std::to_string(headspec::kCheckpointFormat + 1) + "\n");
  const fs::path bad = dir / "bad.ckpt";
  for (const auto& [what, bytes, extra] :
       {std::tuple{"flipped byte", flipped, std::string()},
        std::tuple{"truncated", good.substr(0, good.size() / 2), std::string()},
        std::tuple{"other version", other_version, std::string()},
        std::tuple{"other flags", good, other_flags}}) {
    SCOPED_TRACE(what);
    { std::ofstream(bad, std::ios::binary) << bytes; }
    const auto r = run_cli(args + " " + extra + " --out " + resumed.string() + " --resume " + bad.string());
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(resumed));
    EXPECT_FALSE(fs::exists(resumed.string() + ".json"));
    EXPECT_EQ(read_file(bad), bytes) << "a refused checkpoint is left as it was";
  }

  const auto r = run_cli(args + " --out " + resumed.string() + " --resume " + ckpt.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(resumed), read_file(plain)) << "the resumed CSV differs from the uninterrupted one";
  EXPECT_EQ(sidecar_without_resume(resumed), sidecar_without_resume(plain));
  const auto meta = nlohmann::json::parse(read_file(resumed.string() + ".json"));
  EXPECT_EQ(meta["resumed_from"], ckpt.string());
  EXPECT_FALSE(fs::exists(ckpt)) << "a completed run removes its checkpoint";
  fs::remove_all(dir);
}

TEST(CheckpointCli, DenseSimulationResumesToTheSameBytes) {
  check_interrupt_and_resume("dense",
                             "simulate --engine dense --D 400 --L 4 --T 100 --record-every 1 --test-samples 200 "
                             "--runs 2",
                             "10",
                             "--lr 0.5");
}

// (SIGTERM here, SIGINT elsewhere.)
TEST(CheckpointCli, GramSimulationResumesToTheSameBytes) {
  // About a second on one core: no thread team is started for a record's 200 test samples.
  check_interrupt_and_resume("gram",
                             "simulate --engine gram --D 4000 --L 4 --T 900 --record-every 6 --test-samples 200",
                             "30",
                             "--seed 2", SIGTERM);
}

TEST(CheckpointCli, TheoryWithFixedSamplesResumesToTheSameBytes) {
  check_interrupt_and_resume("theory_fixed",
                             "theory --mc-method sobol --L 4 --mc " + path_case_samples(12000) + " --dt 0.1 --T 60 --record-every 0.5 --init-D 200",
                             "3",
                             "--q0 0.5");
}

TEST(CheckpointCli, TheoryWithResampledSamplesResumesToTheSameBytes) {
  check_interrupt_and_resume("theory_resampled",
                             "theory --mc-method sobol --L 4 --mc " + path_case_samples(16000) + " --mc-resample --dt 0.05 --T 30 --record-every 0.5 --init-D 200",
                             "2",
                             "--integrator heun");
}

// The stochastic theory (docs/model.md §12): its Brownian increments are drawn from the
// stream of (seed, step), so an interrupted run continues with the same noise.
TEST(CheckpointCli, TheorySdeResumesToTheSameBytes) {
  check_interrupt_and_resume("theory_sde",
                             "theory --mc-method sobol --sde --init-D 1000 --L 4 --mc " + path_case_samples(6000) + " --integrator heun --dt 0.1 --T 60 "
                             "--record-every 0.5 --runs 2",
                             "3",
                             "--q0 0.5");
}

// A schedule's change point after the first checkpoint (docs/model.md §4): the resumed run
// takes the factor at the same steps as the uninterrupted one.
TEST(CheckpointCli, GramWithAStepScheduleResumesAcrossItsChangePoint) {
  check_interrupt_and_resume("gram_schedule",
                             "simulate --engine gram --D 4000 --L 4 --T 900 --record-every 6 --test-samples 200 "
                             "--lr-schedule step:450,0.5",
                             "30", "--seed 2");
}

TEST(CheckpointCli, TheoryWithAScheduleResumesAcrossItsChangePoint) {
  check_interrupt_and_resume("theory_schedule",
                             "theory --mc-method sobol --L 4 --mc " + path_case_samples(8000) + " --dt 0.1 --T 60 --record-every 0.5 --init-D 200 "
                             "--lr-schedule step:30,0.5,45,0.2",
                             "3", "--q0 0.5");
}

TEST(CheckpointCli, TheorySdeWithAScheduleResumesAcrossItsChangePoint) {
  check_interrupt_and_resume("theory_sde_schedule",
                             "theory --mc-method sobol --sde --init-D 1000 --L 4 --mc " + path_case_samples(6000) + " --integrator heun --dt 0.1 --T 60 "
                             "--record-every 0.5 --runs 2 --lr-schedule step:30,0.5",
                             "3", "--q0 0.5");
}

TEST(CheckpointCli, MnistResumesToTheSameBytes) {
  HEADSPEC_REQUIRE_REAL_MNIST(data);
  check_interrupt_and_resume("mnist",
                             "mnist --data " + data + " --H 3 --L 4 --T 20 --record-every 1 --test-samples 100 "
                             "--runs 2",
                             "2",
                             "--split-seed 2");
}

TEST(CheckpointCli, BadFlagsAreRefusedBeforeAnythingRuns) {
  const auto dir = fresh_dir("ckpt_cli_bad");
  const fs::path out = dir / "o.csv";
  for (const std::string& bad : std::vector<std::string>{
           "--checkpoint-every 1", "--checkpoint " + (dir / "no" / "c").string(), "--resume " + (dir / "none").string(),
        "--checkpoint " + (dir / "c").string() + " --checkpoint-every -1"}) {
    const auto r = run_cli("simulate --D 200 --T 1 " + bad + " --out " + out.string());
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
  // A checkpoint of one command is refused by another.
  const fs::path ckpt = dir / "sim.ckpt";
  std::string err;
  int delay = 0;
  ASSERT_EQ(interrupt_run("simulate --engine gram --D 1000 --L 4 --T 100000 --record-every 100 --checkpoint-every 1 "
                          "--checkpoint " + ckpt.string(),
                          ckpt, dir, 0, err, delay),
            130)
      << err;
  const auto r = run_cli("theory --mc-method sobol --L 4 --mc 200 --T 1 --init-D 200 --out " + out.string() + " --resume " + ckpt.string());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("command"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

}  // namespace

// The settled-error rule reads the recorded errors, which the checkpoint holds: a resumed run
// stops where the uninterrupted one did (docs/theory.md §3).
TEST(CheckpointCli, TheoryWithTheErrorRuleResumesToTheSameBytes) {
  check_interrupt_and_resume("theory_settled",
                             "theory --mc-method sobol --prior gauss --nu 4,4 --L 4 --H 2 --mc " + path_case_samples(1000) + " --dt 0.1 --T 400 --record-every 0.5 "
                             "--until-error-settled 2e-3 --error-window 40 --init-D 200",
                             "3",
                             "--q0 0.5");
}

// dopri5's stiffness cap counts the steps since the last record; the checkpoint carries that
// count, so a run interrupted while its step size collapses stops, once resumed, after the
// same steps as the uninterrupted one: the same rows, status and evaluations in the sidecar.
TEST(CheckpointCli, ADivergingDopri5RunResumesToTheSameStop) {
  const auto dir = fresh_dir("ckpt_cli_dopri5_cap");
  const fs::path plain = dir / "plain.csv", resumed = dir / "resumed.csv", ckpt = dir / "run.ckpt";
  const std::string args = "theory --mc-method sobol --integrator dopri5 --lr 1e4 --mc 200 --T 20 --record-every 2 --L 4";
  const auto ref = run_cli(args + " --out " + plain.string());
  ASSERT_EQ(ref.status, 3) << ref.err;
  std::string err;
  int delay = 0;
  const int status = interrupt_run(args + " --out " + resumed.string() + " --checkpoint " + ckpt.string() +
                                       " --checkpoint-every 1",
                                   ckpt, dir, 100, err, delay);
  SCOPED_TRACE(std::to_string(delay) + " ms after the first checkpoint");
  ASSERT_EQ(status, 130) << "the run must still be going when interrupted\n" << err;
  const auto r = run_cli(args + " --out " + resumed.string() + " --resume " + ckpt.string());
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(read_file(resumed), read_file(plain));
  EXPECT_EQ(sidecar_without_resume(resumed), sidecar_without_resume(plain))
      << "the resumed run took another number of steps before the cap";
  fs::remove_all(dir);
}
