#pragma once
// The command line as a function (docs/cli.md), for main.cpp and the fuzz target
// fuzz/fuzz_cli.cpp.

namespace headspec::app {

/// Parses argv (argv[0] is the program name) and runs the chosen subcommand; returns the
/// exit status (0 success, 1 failure, 2 bad input, 3 diverged) instead of exiting. With
/// check_only, stops once every flag has been checked, before anything runs or is written.
int run_cli(int argc, const char* const* argv, bool check_only = false);

}  // namespace headspec::app
