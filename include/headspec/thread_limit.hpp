#pragma once
// --threads N and Python's threads=N (docs/cli.md "Threads"): how many OpenMP threads a
// command may use, so that a shared node is not oversubscribed. The numbers do not depend on
// it: every parallel sum is taken in fixed blocks in block order (parallel_mean.hpp).

namespace headspec {

/// For its lifetime, at most `threads` OpenMP threads for the parallel regions the calling
/// thread starts; 0 keeps OpenMP's choice (OMP_NUM_THREADS, or one per core). Restores the
/// previous setting when it ends. Throws ParameterError naming --threads outside [0, 4096].
class ThreadLimit {
 public:
  explicit ThreadLimit(int threads);
  ~ThreadLimit();
  ThreadLimit(const ThreadLimit&) = delete;
  ThreadLimit& operator=(const ThreadLimit&) = delete;

 private:
  int previous_ = 0;  ///< 0: nothing to restore
};

}  // namespace headspec
