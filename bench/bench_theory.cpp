// Right-hand-side evaluations of the theory (docs/model.md §6–7) per second, and one whole
// Fig. 1 theory curve. Numbers and the NumPy comparison: docs/performance.md.
#include <benchmark/benchmark.h>
#include <omp.h>

#include "headspec/dense_engine.hpp"
#include "headspec/theory_integrator.hpp"

using namespace headspec;

namespace {

ModelSpec fig1_model() {
  ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, softmax, learned readout, η = 1
  return m;
}

OrderParameters fig1_state(const ModelSpec& m) {
  OrderParameters op = DenseEngine(m, 10000, 1).order_parameters();
  op.R.setZero();
  op.M(0, 0) += 0.5;  // a state part-way along the curve
  op.M(1, 0) += 0.5;
  op.Q(0, 0) += 0.25;
  op.Q(1, 1) += 0.25;
  op.Q(0, 1) += 0.25;
  op.Q(1, 0) += 0.25;
  return op;
}

// Arg 0: threads; arg 1: 0 integrated value channel, 1 sampled.
void BM_TheoryRhs(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  omp_set_num_threads(threads);
  const ModelSpec m = fig1_model();
  TheoryOptions o;
  o.samples = 10000;
  o.channel = state.range(1) == 0 ? ValueChannel::Integrated : ValueChannel::Sampled;
  const TheoryEngine engine(m, o);
  const OrderParameters op = fig1_state(m);
  TheoryEvaluation ev;
  for (auto _ : state) {
    engine.evaluate(op, 0, ev);
    benchmark::DoNotOptimize(ev.rate.data());
  }
  state.counters["rhs_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  omp_set_num_threads(omp_get_num_procs());
}
BENCHMARK(BM_TheoryRhs)->Args({1, 0})->Args({2, 0})->Args({1, 1})->Args({2, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
// The same on 2 threads with cpu_time the CPU time of the whole process (both threads):
// against the 1-thread CPU time it shows the cost of the parallel region itself, which a
// loaded machine does not hide as it hides the wall-clock speed-up.
BENCHMARK(BM_TheoryRhs)
    ->Name("BM_TheoryRhsAllThreads")
    ->Args({2, 0})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// One thread, g integrated out, N samples (arg): CPU time per sample against N shows what
// streaming the stored samples (320 bytes per sample) from further out in the cache costs:
// at N = 1024 they fit in L2 (320 kB), at 10^4 (3.2 MB) and 10^5 (32 MB) they do not.
void BM_TheoryRhsSamples(benchmark::State& state) {
  omp_set_num_threads(1);
  const ModelSpec m = fig1_model();
  TheoryOptions o;
  o.samples = state.range(0);
  const TheoryEngine engine(m, o);
  const OrderParameters op = fig1_state(m);
  TheoryEvaluation ev;
  for (auto _ : state) {
    engine.evaluate(op, 0, ev);
    benchmark::DoNotOptimize(ev.rate.data());
  }
  state.counters["ns_per_sample"] = benchmark::Counter(
      static_cast<double>(state.iterations() * state.range(0)), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  omp_set_num_threads(omp_get_num_procs());
}
BENCHMARK(BM_TheoryRhsSamples)->Arg(1024)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// A whole Fig. 1 theory curve: N = 10^4 fixed samples, RK4 with dt = 0.05, t from 0 to 150.
void BM_TheoryFig1Curve(benchmark::State& state) {
  omp_set_num_threads(static_cast<int>(state.range(0)));
  const ModelSpec m = fig1_model();
  TheoryOptions o;
  o.samples = 10000;
  const TheoryEngine engine(m, o);
  OrderParameters init = DenseEngine(m, 10000, 1).order_parameters();
  init.R.setZero();
  IntegrationSpec spec;
  spec.T = 150;
  spec.record_every = 1;
  spec.dt = 0.05;
  for (auto _ : state) {
    const TheoryResult r = integrate_theory(engine, init, spec, 0);
    benchmark::DoNotOptimize(r.trajectory.records.data());
  }
  omp_set_num_threads(omp_get_num_procs());
}
BENCHMARK(BM_TheoryFig1Curve)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
BENCHMARK_MAIN();
