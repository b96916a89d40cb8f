// One regression test per finding of the fuzz targets and the sanitizer build
// (docs/testing.md, hardening).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <utility>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/prior.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

Prior mixture_text(const std::string& text) {
  std::istringstream in(text);
  return Prior::mixture_stream(in, "text");
}

}  // namespace

// Found by review while writing the fuzz target: 2 points × 2·10^9 runs overflowed the
// int task count of `sweep` (undefined behaviour; before the fix, status 1 from
// std::vector's length check).
TEST(Hardening, SweepWithMoreThanIntMaxRunsIsBadInput) {
  const auto r = run_cli("sweep --engine gram --grid 'H=1:2' --runs 2000000000 --T 0 --L 5 --D 100");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--runs"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Found by fuzz_mixture (input "2 1e-3\n1e-300 -71e200\n"): every entry is finite, but
// θ² overflows, so ν was +inf and log w(λ) NaN. Likewise for the weights' sum, and for
// the atom √ν of a spike.
TEST(Hardening, MixtureWhoseSquaresOrWeightSumOverflowIsRejected) {
  EXPECT_THROW(mixture_text("2 1e-3\n1e-300 -71e200\n"), UsageError);
  EXPECT_THROW(mixture_text("1 1e200 0\n"), UsageError);
  EXPECT_THROW(mixture_text("1 1e154 1e154 1e154\n"), UsageError);  // each θ_f² finite, |θ|² not
  EXPECT_THROW(mixture_text("1e308 1\n1e308 -1\n"), UsageError);
  EXPECT_THROW(Prior::spike(Eigen::Vector2d(1e308, 1e308)), UsageError);
  try {
    Prior::spike(Eigen::Vector2d(1e308, 1e308));
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--nu:", 0), 0u) << e.what();
  }
  // Large but representable values are still accepted.
  const Prior p = mixture_text("1e300 1e150\n1e-300 -1e150\n");
  EXPECT_TRUE(p.nu().allFinite());
  EXPECT_NEAR(p.weights().sum(), 1.0, 1e-15);
}

// Found by review (output safety): an empty value of a text flag was taken as the flag left
// out (`--out ''` wrote to standard output, `--checkpoint ''` kept none). Each is refused.
TEST(Hardening, EmptyTextValuesAreRefusedNotTakenAsAbsent) {
  for (const std::string& args :
       {std::string("simulate --T 1 --out ''"), std::string("theory --mc-method sobol --T 1 --mc 1000 --checkpoint ''"),
        std::string("theory --mc-method sobol --T 1 --mc 1000 --resume ''"), std::string("simulate --T 1 --activation ''"),
        std::string("sweep --grid L=3 --T 1 --work-dir ''"), std::string("linearise --mc-method sobol --mc 1000 --out ''"),
        std::string("theory --mc-method sobol --T 1 --lr-schedule ''")}) {
    SCOPED_TRACE(args);
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
    EXPECT_NE(r.err.find("an empty value"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // The grid of one point stays '' (docs/cli.md).
  const auto one = run_cli("sweep --engine gram --grid '' --T 0 --L 3 --D 50 --test-samples 10 --progress off");
  EXPECT_EQ(one.status, 0) << one.err;
}

// Outputs are created as open() would create them: 0666 less the umask (issue: they were 0644
// whatever the umask). Every file a run writes — the CSV, its sidecar, a checkpoint — under
// umask 077 and 002.
TEST(Hardening, OutputsHonourTheUmask) {
  const auto dir = fresh_dir("umask");
  for (const auto& [mask, mode] : std::vector<std::pair<std::string, unsigned>>{{"077", 0600u}, {"002", 0664u}}) {
    SCOPED_TRACE("umask " + mask);
    const auto out = dir / ("out" + mask + ".csv");
    const auto r = run_cli("simulate --engine gram --D 200 --L 4 --T 1 --out " + out.string(), "umask " + mask + ";");
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& file : {out, std::filesystem::path(out.string() + ".json")}) {
      struct stat st {};
      ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
      EXPECT_EQ(st.st_mode & 0777u, mode) << file;
    }
  }
  std::filesystem::remove_all(dir);
}

// Output into a closed pipe: one line on stderr and status 1 (docs/cli.md "Errors"), not a
// silent death by SIGPIPE. The pipe's read end is closed before the program starts, so its
// write fails whatever the machine's load.
TEST(Hardening, ClosedPipeOnStandardOutputIsOneLineAndStatus1) {
  const auto dir = fresh_dir("closed_pipe");
  const auto err = dir / "err";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);  // as a shell would start it
    ::dup2(fds[1], 1);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(e, 2);
    ::execl(HEADSPEC_BINARY, HEADSPEC_BINARY, "simulate", "--engine", "gram", "--D", "100", "--L", "4", "--T", "2",
            "--progress", "off", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string message = read_file(err);
  EXPECT_EQ(count_lines(message), 1) << message;
  EXPECT_NE(message.find("standard output"), std::string::npos) << message;
  std::filesystem::remove_all(dir);
}
