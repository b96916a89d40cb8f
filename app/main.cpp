// headspec: training dynamics of multi-head softmax attention in the high-dimensional
// single-location model. Command-line contract: docs/cli.md; the parsing is app/cli.cpp.
#include "cli.hpp"

int main(int argc, char** argv) { return headspec::app::run_cli(argc, argv); }
