#include "headspec/thread_limit.hpp"

#include <fmt/format.h>
#include <omp.h>

#include "headspec/errors.hpp"

namespace headspec {

// The bound is no machine's core count: a larger value is a typo, not a request.
constexpr int kMaxThreads = 4096;

ThreadLimit::ThreadLimit(int threads) {
  if (threads < 0 || threads > kMaxThreads)
    throw ParameterError("threads", fmt::format("must be between 0 and {}, got {}", kMaxThreads, threads));
  if (threads == 0) return;
  previous_ = omp_get_max_threads();
  omp_set_num_threads(threads);
}

ThreadLimit::~ThreadLimit() {
  if (previous_ > 0) omp_set_num_threads(previous_);
}

}  // namespace headspec
