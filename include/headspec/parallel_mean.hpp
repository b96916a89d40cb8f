#pragma once
// Reproducible parallel averages: the sum over i of f(i) is taken in fixed blocks added
// in block order, so the bits do not depend on the number of threads.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "headspec/errors.hpp"

namespace headspec {

struct MeanEstimate {
  double mean = 0;
  double stderr_ = 0;  ///< standard error of the mean
};

/// Mean and standard error of f(i), i ∈ [0, n). make_worker() is called once per thread
/// and returns a callable double(int64_t) holding that thread's scratch space. Threads start
/// only from kParallelBlocks blocks on: below (e.g. the default 2000 test samples of a record)
/// waking a team costs more than it saves, and on a loaded machine far more. The blocks are
/// the same either way, so are the bits. Once `stop` (if not null) is set, the blocks not yet
/// begun are skipped and Interrupted is thrown.
template <class MakeWorker>
MeanEstimate parallel_mean(int64_t n, MakeWorker make_worker, const std::atomic<bool>* stop = nullptr) {
  constexpr int64_t kBlock = 256;
  constexpr int64_t kParallelBlocks = 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> s1(blocks), s2(blocks);
#pragma omp parallel if (blocks >= kParallelBlocks)
  {
    auto f = make_worker();
#pragma omp for schedule(dynamic, 4)
    for (int64_t b = 0; b < blocks; ++b) {
      if (stop && stop->load(std::memory_order_relaxed)) continue;
      double a1 = 0, a2 = 0;
      for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
        const double v = f(i);
        a1 += v;
        a2 += v * v;
      }
      s1[b] = a1;
      s2[b] = a2;
    }
  }
  if (stop && stop->load()) throw Interrupted();
  double t1 = 0, t2 = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    t1 += s1[b];
    t2 += s2[b];
  }
  MeanEstimate e;
  e.mean = t1 / static_cast<double>(n);
  const double var = n > 1 ? (t2 - static_cast<double>(n) * e.mean * e.mean) / static_cast<double>(n - 1) : 0.0;
  e.stderr_ = std::sqrt(std::max(var, 0.0) / static_cast<double>(n));
  return e;
}

}  // namespace headspec
