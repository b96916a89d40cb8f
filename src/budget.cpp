// Run budgets (include/headspec/budget.hpp).
#include "headspec/budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "headspec/errors.hpp"

namespace headspec {

double default_max_memory_gib() {
  const double pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  return pages > 0 && page > 0 ? 0.8 * pages * page / double(1 << 30) : 16.0;
}

double records_bytes(double rows, int columns) {
  // A Record holds its numbers as doubles plus ~ 100 bytes of vectors' overhead; the CSV
  // text takes up to 25 bytes per number, and both exist while the output is written.
  return rows * (columns * (8.0 + 25.0) + 100.0);
}

void check_budget(const RunBudget& budget, const LimitSettings& limits) {
  if (!(std::isfinite(limits.max_memory) && limits.max_memory >= 0))
    throw ParameterError("max-memory", fmt::format("must be >= 0 (GiB; 0: 80 % of the memory), got {}", limits.max_memory));
  if (!(std::isfinite(limits.max_steps) && limits.max_steps > 0))
    throw ParameterError("max-steps", fmt::format("must be > 0, got {}", limits.max_steps));
  const double gib = limits.max_memory > 0 ? limits.max_memory : default_max_memory_gib();
  const double need = budget.bytes / double(1 << 30);
  if (need > gib)
    throw ParameterError("max-memory", fmt::format("the run would need about {:.3g} GiB ({}), more than the limit of "
                                                   "{:.3g} GiB; reduce it or raise --max-memory",
                                                   need, budget.what, gib));
  if (budget.steps > limits.max_steps)
    throw ParameterError("max-steps", fmt::format("the run would take about {:.3g} steps ({}), more than the limit of "
                                                  "{:.3g}; reduce it or raise --max-steps",
                                                  budget.steps, budget.what, limits.max_steps));
}

}  // namespace headspec
