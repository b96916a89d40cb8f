#pragma once
// Running the built headspec binary from tests.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace headspec::testing {

struct CliResult {
  int status = -1;
  std::string out, err;
};

/// Runs `headspec ARGS` with a shell; captures stdout and stderr.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const auto out = dir / ("hs_out_" + tag), err = dir / ("hs_err_" + tag);
  const std::string cmd = env + " " + HEADSPEC_BINARY + " " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  auto slurp = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

/// A fresh empty folder under the system temp folder.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("headspec_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Number of lines (newline characters) in s: an error message must be exactly one.
inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

/// How much slower the engines' sample loops run in the sanitizer build (docs/testing.md
/// "Hardening"; measured 50–80× for the theory's Monte Carlo rates, against 16× for the
/// suite as a whole), 1 elsewhere. A case that checks a code path — a run that must last long
/// enough to be interrupted, a resume to the same bytes, a divergence reported — and not a
/// statistic divides its Monte Carlo work by it there, so that the stage runs every path in
/// minutes; a statistical case never does (its tolerance comes from its sample count).
#ifdef HEADSPEC_TEST_SANITIZED
inline constexpr long kSanitizerSlowdown = 16;
#else
inline constexpr long kSanitizerSlowdown = 1;
#endif

/// `n` samples of a code-path case, divided by kSanitizerSlowdown (at least `least`), as the
/// text of a flag's value.
inline std::string path_case_samples(long n, long least = 64) {
  return std::to_string(std::max(n / kSanitizerSlowdown, std::min(n, least)));
}

}  // namespace headspec::testing
