// Steps per second of the reduced engine (docs/model.md §9) across D — flat in D is the point —
// and its speed against the dense engine at D = 10^4, L = 10, H = 2 in the same run. Both
// engines on one thread (the dense engine's loops are serialised) so that the ratio is
// per core. Model: flip ν = (2,2), softmax, learned readout.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <time.h>

#include "headspec/dense_engine.hpp"
#include "headspec/gram_engine.hpp"
#include "headspec/random.hpp"
#include "headspec/wishart.hpp"

using namespace headspec;

namespace {

ModelSpec bench_model(int L) {
  ModelSpec m;
  m.L = L;
  m.H = 2;
  return m;
}

void BM_GramStep(benchmark::State& state) {
  const int64_t D = state.range(0);
  const ModelSpec model = bench_model(static_cast<int>(state.range(1)));
  GramEngine e(model, D, 1);
  uint64_t n = 0;
  for (auto _ : state) e.step(n++);
  benchmark::DoNotOptimize(e.coordinates().data());
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GramStep)
    ->ArgsProduct({{100, 10'000, 1'000'000, 1'000'000'000, 1'000'000'000'000}, {5, 10}})
    ->ArgNames({"D", "L"});

// The same steps through the general-size code (GramEngine::use_general_step): the gain of
// the fixed-size step in one binary.
void BM_GramStepGeneral(benchmark::State& state) {
  const ModelSpec model = bench_model(static_cast<int>(state.range(1)));
  GramEngine e(model, state.range(0), 1);
  e.use_general_step();
  uint64_t n = 0;
  for (auto _ : state) e.step(n++);
  benchmark::DoNotOptimize(e.coordinates().data());
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GramStepGeneral)->Args({10'000, 5})->Args({10'000, 10})->ArgNames({"D", "L"});

void BM_DenseStep(benchmark::State& state) {
  omp_set_num_threads(1);
  const ModelSpec model = bench_model(static_cast<int>(state.range(1)));
  DenseEngine e(model, state.range(0), 1);
  uint64_t n = 0;
  for (auto _ : state) e.step(n++);
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DenseStep)->Args({10'000, 10})->ArgNames({"D", "L"});

// Seconds of CPU time of the calling thread: on a shared machine, wall-clock intervals of a
// few milliseconds include other jobs' time slices.
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The ratio in one measurement: the same number of steps of each engine, timed back to back
// (thread CPU time).
void BM_GramOverDense_D1e4_L10_H2(benchmark::State& state) {
  omp_set_num_threads(1);
  const ModelSpec model = bench_model(10);
  const int64_t D = 10'000;
  DenseEngine dense(model, D, 1);
  GramEngine gram(model, D, 1);
  uint64_t n = 0;
  double t_dense = 0, t_gram = 0;
  for (auto _ : state) {
    const double a = thread_cpu_seconds();
    for (int k = 0; k < 20; ++k) dense.step(n + k);
    const double b = thread_cpu_seconds();
    for (int k = 0; k < 20; ++k) gram.step(n + k);
    const double c = thread_cpu_seconds();
    n += 20;
    t_dense += b - a;
    t_gram += c - b;
  }
  state.counters["ratio"] = t_dense / t_gram;
  state.counters["dense_us/step"] = 1e6 * t_dense / n;
  state.counters["gram_us/step"] = 1e6 * t_gram / n;
}
BENCHMARK(BM_GramOverDense_D1e4_L10_H2)->Unit(benchmark::kMillisecond);

// The draws of one step at L = 5, H = 2, F = 2 (flip prior: ℓ*, one sign, 25 frame
// coordinates, the 2 × 2 Bartlett factor at D = 10^5) from a fresh stream per step, as the
// engine draws them, with StreamChunk::Group (128 normals and 128 uniforms per refill, the
// engine's streams before) and StreamChunk::Batch (32 and 4, the engine's now): the ratio
// in one process, timed back to back (thread CPU time).
void BM_StepDrawsGroupOverBatch(benchmark::State& state) {
  const BartlettSampler bartlett(2, 100000.0 - 5);
  RowMatrix T;
  double sink = 0;
  const auto draws = [&](StreamChunk chunk, uint64_t n) {
    RandomStream rng(StreamId{1, Purpose::Train, 5, n}, chunk);
    sink += rng.below(5) + rng.coin();
    for (int k = 0; k < 25; ++k) sink += rng.normal();
    bartlett(rng, T);
    sink += T(1, 0);
  };
  uint64_t n = 0;
  double t_group = 0, t_batch = 0;
  for (auto _ : state) {
    const double a = thread_cpu_seconds();
    for (int k = 0; k < 200; ++k) draws(StreamChunk::Group, n + k);
    const double b = thread_cpu_seconds();
    for (int k = 0; k < 200; ++k) draws(StreamChunk::Batch, n + k);
    const double c = thread_cpu_seconds();
    n += 200;
    t_group += b - a;
    t_batch += c - b;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["ratio"] = t_group / t_batch;
  state.counters["group_ns/step"] = 1e9 * t_group / n;
  state.counters["batch_ns/step"] = 1e9 * t_batch / n;
}
BENCHMARK(BM_StepDrawsGroupOverBatch)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
