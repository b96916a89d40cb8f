// libFuzzer target: the command line (app/cli.cpp) on arbitrary argument vectors, one
// argument per line of the input. run_cli runs in check-only mode: every flag is parsed
// and checked as for a real run, then the command returns before any computation or
// output (docs/testing.md). A check-only call must end in status 0 (valid) or in status 2
// with exactly one line "headspec: error: …" on stderr (docs/cli.md "Errors"); anything
// else -- a crash, a sanitizer report, status 1 (an exception other than a usage error),
// a malformed message -- is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {
[[noreturn]] void finding(const char* what, int status, const std::string& err) {
  std::fprintf(stderr, "fuzz_cli: %s (status %d, stderr: %s)\n", what, status, err.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"headspec"};
  std::string current;
  for (size_t i = 0; i < size; ++i) {
    const char ch = static_cast<char>(data[i]);
    if (ch == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  // The command line's own output (help, error lines) is captured, not printed.
  std::ostringstream out, err;
  std::streambuf* const cout_buf = std::cout.rdbuf(out.rdbuf());
  std::streambuf* const cerr_buf = std::cerr.rdbuf(err.rdbuf());
  const int status = headspec::app::run_cli(static_cast<int>(args.size()), argv.data(), /*check_only=*/true);
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);

  const std::string e = err.str();
  if (status == 2) {
    const std::string prefix = "headspec: error: ";
    if (e.compare(0, prefix.size(), prefix) != 0 || e.back() != '\n' || e.find('\n') != e.size() - 1)
      finding("bad input without exactly one error line", status, e);
  } else if (status != 0) {
    finding("check-only run neither valid nor bad input", status, e);
  }
  return 0;
}
