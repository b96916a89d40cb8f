#pragma once
// What a run will allocate and compute, estimated from its flags before it starts, and the
// limits it is checked against (docs/cli.md "Limits"): a run that could not finish (out of
// memory after hours, or 10^15 steps) is refused at once with its estimate.
#include <cstdint>
#include <string>

namespace headspec {

/// --max-memory, --max-steps and --threads (Python: max_memory=, max_steps=, threads=).
struct LimitSettings {
  double max_memory = 0;   ///< GiB; 0: 80 % of the machine's physical memory
  double max_steps = 1e14; ///< SGD steps, Monte Carlo sample evaluations or quadrature terms
  int threads = 0;         ///< OpenMP threads at most; 0: OpenMP's choice (thread_limit.hpp)
};

struct RunBudget {
  double bytes = 0;  ///< the memory the run holds at its peak (the estimate's dominant terms)
  double steps = 0;  ///< the work: SGD steps, sample evaluations, quadrature terms
  std::string what;  ///< what dominates, for the message ("10^8 runs × 21 records")
};

/// 80 % of the physical memory, in GiB (the default of --max-memory).
double default_max_memory_gib();

/// The memory of `rows` recorded rows of `columns` numbers: the records and their CSV text.
double records_bytes(double rows, int columns);

/// Throws UsageError naming --max-memory or --max-steps, with the estimate, if the budget
/// exceeds a limit; also checks the limits themselves.
void check_budget(const RunBudget& budget, const LimitSettings& limits);

}  // namespace headspec
