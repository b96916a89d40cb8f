// The dense engine's determinism (docs/model.md §4; dense_engine.hpp): the keys and readout after
// a run are the same bits whatever the number of OpenMP threads, and the same for the same
// seed; a different seed gives a different run.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <vector>

#include "headspec/dense_engine.hpp"

using namespace headspec;

namespace {

struct State {
  std::vector<double> keys;
  std::vector<double> readout;
};

State run(const ModelSpec& model, int64_t D, uint32_t seed, int threads, int steps) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  DenseEngine engine(model, D, seed);
  for (int n = 0; n < steps; ++n) engine.step(static_cast<uint64_t>(n));
  omp_set_num_threads(saved);
  const auto& c = engine.readout();
  return {engine.keys(), std::vector<double>(c.data(), c.data() + c.size())};
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

// D is not a multiple of the chunk (the last chunk is short) and has enough chunks for the
// step to run in parallel; B = 1 and B = 3, and an odd number of heads (the pairing of
// heads in the score loop has a remainder).
TEST(DenseEngine, SameBitsForAnyThreadCount) {
  for (int B : {1, 3}) {
    ModelSpec model;
    model.H = 3;
    model.L = 5;
    model.batch = B;
    const int64_t D = DenseEngine::kParallelChunks * DenseEngine::kChunk + 77;
    const State one = run(model, D, 4, 1, 4), two = run(model, D, 4, 2, 4);
    EXPECT_TRUE(same_bits(one.keys, two.keys)) << "B = " << B;
    EXPECT_TRUE(same_bits(one.readout, two.readout)) << "B = " << B;
    const State again = run(model, D, 4, 1, 4), other = run(model, D, 5, 1, 4);
    EXPECT_TRUE(same_bits(one.keys, again.keys));
    EXPECT_FALSE(same_bits(one.keys, other.keys));
  }
}
