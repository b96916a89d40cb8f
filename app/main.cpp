// headspec: training dynamics of multi-head softmax attention in the high-dimensional
// single-location model. Command-line contract: docs/cli.md; the parsing is app/cli.cpp.
#include "cli.hpp"
#include "headspec/allocation.hpp"
#include "signals.hpp"

int main(int argc, char** argv) {
  headspec::retain_freed_memory();
  headspec::app::install_signal_handlers();
  return headspec::app::run_cli(argc, argv);
}
