// Samples per second of the dense engine (docs/model.md §1–4) at D = 10^4, L = 10, H = 2
// (the CLI defaults otherwise: flip prior ν = (2, 2), softmax, learned readout), on 1 and 2
// OpenMP threads. One SGD step at B = 1 is one sample.
#include <benchmark/benchmark.h>
#include <omp.h>

#include "headspec/dense_engine.hpp"

namespace {

void BM_DenseStep(benchmark::State& state) {
  const int64_t D = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  headspec::ModelSpec model;
  model.L = 10;
  model.H = 2;
  headspec::DenseEngine engine(model, D, 1);
  uint64_t n = 0;
  for (auto _ : state) engine.step(n++);
  benchmark::DoNotOptimize(engine.keys().data());
  omp_set_num_threads(saved);
  state.SetItemsProcessed(state.iterations());
  state.counters["samples_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DenseStep)->ArgNames({"D", "threads"})->Args({10000, 1})->Args({10000, 2})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
