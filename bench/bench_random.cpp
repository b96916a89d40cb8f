// ns per Gaussian: fill_normal (Philox4x32-10 → 1024-layer ziggurat) against reference generators
// built here — a vectorised Box–Muller on xoshiro256+ (libmvec; fill_normal's transform
// before the ziggurat, without the counter-based cost), Boost's ziggurat on xoshiro256+, and std::normal_distribution
// for context. The counter "ns_per_normal" is the number to read.
#include <benchmark/benchmark.h>
#include <math.h>

#include <Random123/philox.h>
#include <boost/random/normal_distribution.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "headspec/philox.hpp"
#include "headspec/random.hpp"

namespace {

using headspec::StreamId;

benchmark::Counter per_item(double items) {
  return benchmark::Counter(items, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

constexpr std::size_t kN = 10000;  // one token of the dense engine at D = 10^4

void BM_FillNormal(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> out(n);
  StreamId id{1, headspec::Purpose::Train, 0, 0};
  for (auto _ : state) {
    headspec::fill_normal(id, 0, out.data(), n);
    ++id.step;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_normal"] = per_item(static_cast<double>(n));
}
BENCHMARK(BM_FillNormal)->Arg(128)->Arg(kN);

void BM_FillUniform(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<double> out(n);
  StreamId id{1, headspec::Purpose::Train, 0, 0};
  for (auto _ : state) {
    headspec::fill_uniform(id, 0, out.data(), n);
    ++id.step;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_uniform"] = per_item(static_cast<double>(n));
}
BENCHMARK(BM_FillUniform)->Arg(kN);

// Random123's scalar Philox4x32-10, one block (four 32-bit words) per call.
void BM_PhiloxScalarBlock(benchmark::State& state) {
  const r123::Philox4x32 rng;
  const r123::Philox4x32::key_type key{{1, 2}};
  uint32_t i = 0, sink = 0;
  for (auto _ : state) {
    for (int k = 0; k < 1024; ++k) {
      const auto r = rng(r123::Philox4x32::ctr_type{{i++, 0, 0, 0}}, key);
      sink ^= r[0] ^ r[1] ^ r[2] ^ r[3];
    }
  }
  benchmark::DoNotOptimize(sink);
  state.counters["ns_per_block"] = per_item(1024);
}
BENCHMARK(BM_PhiloxScalarBlock);

// headspec::philox4x32_10, the same blocks through the widest path of this processor
// (philox_instruction_set(); the label says which), 1024 blocks per call.
void BM_PhiloxVectorBlock(benchmark::State& state) {
  std::vector<uint32_t> out(4 * 1024);
  uint32_t i = 0;
  for (auto _ : state) {
    headspec::philox4x32_10(1, 2, i, 0, 0, 0, 1024, out.data());
    i += 1024;
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(headspec::philox_instruction_set());
  state.counters["ns_per_block"] = per_item(1024);
}
BENCHMARK(BM_PhiloxVectorBlock);

// xoshiro256+ (Blackman & Vigna), the fastest well-tested 64-bit generator for floating
// point; four independent states side by side so that the compiler vectorises it.
struct Xoshiro4 {
  uint64_t s[4][4];
  explicit Xoshiro4(uint64_t seed) {
    std::mt19937_64 init(seed);
    for (auto& row : s)
      for (auto& x : row) x = init();
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  // out[j] for j < 4: one draw of each of the four generators.
  void next4(uint64_t* out) {
#pragma omp simd
    for (int j = 0; j < 4; ++j) {
      out[j] = s[0][j] + s[3][j];
      const uint64_t t = s[1][j] << 17;
      s[2][j] ^= s[0][j];
      s[3][j] ^= s[1][j];
      s[1][j] ^= s[2][j];
      s[0][j] ^= s[3][j];
      s[2][j] ^= t;
      s[3][j] = rotl(s[3][j], 45);
    }
  }
};

// The top 53 bits as a double in (0, 1) without a 64-bit integer conversion (which AVX2 lacks).
inline double open01(uint64_t x) {
  const uint64_t bits = (x >> 12) | 0x3FF0000000000000ULL;  // [1, 2) with 52 random bits
  double d;
  __builtin_memcpy(&d, &bits, sizeof d);
  return (2.0 - d);  // (0, 1]
}

// (r cos πv, r sin πv), r = √(−2 ln u), interleaved. Not inlined, and the pointers are not
// known to be distinct: otherwise GCC 12 fuses sin and cos into scalar sincos calls.
__attribute__((noinline)) void box_muller_pairs(const double* u, const double* v, double* out, int n) {
#pragma omp simd
  for (int b = 0; b < n; ++b) {
    const double r = sqrt(-2.0 * log(u[b]));
    out[2 * b] = r * cos(M_PI * v[b]);
    out[2 * b + 1] = r * sin(M_PI * v[b]);
  }
}

// Reference 1: vectorised Box–Muller on xoshiro256+ (this file is compiled with
// -ffast-math, bench/CMakeLists.txt, so log/sin/cos are libmvec's vector variants).
void BM_XoshiroBoxMullerVector(benchmark::State& state) {
  Xoshiro4 gen(7);
  constexpr int kPairs = 64;
  constexpr std::size_t kCount = (kN / (2 * kPairs) + 1) * 2 * kPairs;  // whole blocks only
  std::vector<double> out(kCount);
  alignas(64) uint64_t w[2 * kPairs];
  alignas(64) double u[kPairs], v[kPairs];
  for (auto _ : state) {
    for (std::size_t i = 0; i < kCount; i += 2 * kPairs) {
      for (int k = 0; k < 2 * kPairs; k += 4) gen.next4(w + k);
#pragma omp simd
      for (int b = 0; b < kPairs; ++b) {
        u[b] = open01(w[b]);
        v[b] = 2.0 * open01(w[kPairs + b]) - 1.0;
      }
      box_muller_pairs(u, v, out.data() + i, kPairs);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_normal"] = per_item(kCount);
}
BENCHMARK(BM_XoshiroBoxMullerVector);

// xoshiro256+ as a standard uniform random bit generator, for distribution objects.
struct Xoshiro256Plus {
  using result_type = uint64_t;
  uint64_t s[4];
  explicit Xoshiro256Plus(uint64_t seed) {
    std::mt19937_64 init(seed);
    for (auto& x : s) x = init();
  }
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }
  uint64_t operator()() {
    const uint64_t r = s[0] + s[3], t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
  }
};

// Reference 2: Boost.Random's normal_distribution (a ziggurat) on xoshiro256+.
void BM_XoshiroZigguratBoost(benchmark::State& state) {
  Xoshiro256Plus gen(7);
  boost::random::normal_distribution<double> normal;
  std::vector<double> out(kN);
  for (auto _ : state) {
    for (auto& x : out) x = normal(gen);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_normal"] = per_item(kN);
}
BENCHMARK(BM_XoshiroZigguratBoost);

// Context: the standard library (Marsaglia polar method on mt19937_64 in libstdc++).
void BM_StdNormalMt19937(benchmark::State& state) {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  std::vector<double> out(kN);
  for (auto _ : state) {
    for (auto& x : out) x = normal(gen);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_normal"] = per_item(kN);
}
BENCHMARK(BM_StdNormalMt19937);

}  // namespace

BENCHMARK_MAIN();
