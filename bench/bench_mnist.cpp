// Samples per second of the MNIST task (docs/model.md §11): D = 784, H = 10, L = 5 (seed Fig. 5).
// The digits are synthetic (random grey levels), which costs the same as the real ones and
// needs no data folder. "threads" engines step side by side (one run per core, as
// `headspec mnist --runs K` does); the rate counts the samples of all of them.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <memory>
#include <random>

#include "headspec/mnist_engine.hpp"
#include "headspec/random.hpp"

using namespace headspec;

namespace {

const MnistTask& synthetic_task() {
  static const MnistTask task = [] {
    MnistDigits d;
    std::mt19937 gen(1);
    std::uniform_int_distribution<int> level(0, 1000);
    for (int c = 0; c < kMnistClasses; ++c) {
      d.count[c] = 100;
      for (int i = 0; i < 100; ++i) {
        d.label.push_back(c);
        for (int p = 0; p < kMnistPixels; ++p) d.milli.push_back(static_cast<uint16_t>(level(gen)));
      }
    }
    return MnistTask::build(d, split_mnist(d, 0.8, 1));
  }();
  return task;
}

void BM_MnistSteps(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  ModelSpec model;
  model.H = 10;
  model.L = 5;
  std::vector<std::unique_ptr<MnistEngine>> engines;
  for (int k = 0; k < threads; ++k)
    engines.push_back(std::make_unique<MnistEngine>(synthetic_task(), model, 1000.0, 1 + k));
  constexpr int kSteps = 200;
  uint64_t n = 0;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int k = 0; k < threads; ++k)
      for (int s = 0; s < kSteps; ++s) engines[k]->step(n + s);
    n += kSteps;
  }
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kSteps * threads, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MnistSteps)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

// The share of one step spent drawing its noise tokens: L × D = 5 × 784 normals per sample.
void BM_MnistNoiseTokens(benchmark::State& state) {
  std::vector<double> tokens(5 * kMnistPixels);
  uint64_t n = 0;
  for (auto _ : state) {
    for (uint32_t l = 0; l < 5; ++l)
      fill_normal(StreamId{1, Purpose::Train, l, n}, 0, tokens.data() + l * kMnistPixels, kMnistPixels);
    benchmark::DoNotOptimize(tokens.data());
    ++n;
  }
  state.counters["samples_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MnistNoiseTokens);

// The test error of Fig. 5 (right): 1000 test samples per record.
void BM_MnistTestError(benchmark::State& state) {
  ModelSpec model;
  model.H = 10;
  model.L = 5;
  MnistEngine engine(synthetic_task(), model, 1000.0, 1);
  for (auto _ : state) benchmark::DoNotOptimize(engine.test_error(1000).mean);
  state.counters["samples_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 1000,
                                                       benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MnistTestError)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
