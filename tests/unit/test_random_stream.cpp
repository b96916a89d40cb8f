// RandomStream (include/headspec/random.hpp): below(m), and its normals and uniforms are
// the fills of its lane. Statistical bounds are the 0.999 quantile of the test statistic,
// with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/random.hpp"
#include "random_helpers.hpp"

using namespace headspec;
using namespace headspec::testing;

// RandomStream::below(m) is uniform on {0..m−1}: chi-square at level 10^-3, for moduli that
// divide 2^32 and that do not.
TEST(RandomStream, BelowIsUniform) {
  for (uint32_t m : {2u, 3u, 7u, 10u, 64u, 1000u}) {
    RandomStream rng(StreamId{12, Purpose::Data, m, 0});
    const int draws = 500'000;
    std::vector<double> count(m, 0.0);
    for (int i = 0; i < draws; ++i) {
      const uint32_t k = rng.below(m);
      ASSERT_LT(k, m);
      count[k] += 1;
    }
    const double expected = static_cast<double>(draws) / m;
    double chi2 = 0;
    for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
    // χ²(1) 0.999 quantile is 10.83; Wilson–Hilferty is used from 5 degrees of freedom.
    const double bound = m - 1 < 5 ? (m == 2 ? 10.828 : 13.816) : chi2_quantile(m - 1, kZ999);
    EXPECT_LT(chi2, bound) << "m = " << m;
  }
  RandomStream one(StreamId{12, Purpose::Data, 0, 1});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(one.below(1), 0u);
}

// Sequential draws are the fills of the stream's two sub-lanes, whatever their interleaving.
TEST(RandomStream, NormalsAreTheFillOfItsLane) {
  const StreamId id{13, Purpose::Train, 6, 2};
  RandomStream rng(id);
  std::vector<double> drawn;
  for (int i = 0; i < 300; ++i) {
    drawn.push_back(rng.normal());
    if (i % 3 == 0) rng.uniform();
  }
  StreamId normal_lane = id;
  normal_lane.lane = 2 * id.lane + 1;
  EXPECT_TRUE(same_bits(drawn, normals(normal_lane, 0, 300)));
}

// The fused first refill of a Batch stream whose first draw is a uniform, over enough
// streams that some of its words go through the slow path (0.4 % of 9600 words, ~38).
TEST(RandomStream, BatchFirstRefillsFusedAreTheFills) {
  for (uint32_t lane = 0; lane < 300; ++lane) {
    const StreamId id{4, Purpose::Train, lane, 11};
    RandomStream rng(id, StreamChunk::Batch);
    StreamId normal_lane = id, uniform_lane = id;
    normal_lane.lane = 2 * lane + 1;
    uniform_lane.lane = 2 * lane;
    const auto u = uniforms(uniform_lane, 0, 4), fill = normals(normal_lane, 0, 128);
    ASSERT_EQ(rng.uniform(), u[0]);
    std::vector<double> drawn(32), expected(32);
    rng.normals(drawn.data(), 32);
    for (int j = 0; j < 32; ++j) expected[j] = fill[j < 16 ? j : 64 + j - 16];
    ASSERT_TRUE(same_bits(drawn, expected)) << "lane " << lane;
    for (int k = 1; k < 4; ++k) ASSERT_EQ(rng.uniform(), u[k]);
  }
}

// normals(out, n) gives the next n normal() draws, across refills of both chunk layouts.
TEST(RandomStream, BulkNormalsAreTheScalarDraws) {
  for (const StreamChunk chunk : {StreamChunk::Group, StreamChunk::Batch}) {
    const StreamId id{21, Purpose::Train, 3, 77};
    RandomStream one(id, chunk), bulk(id, chunk);
    std::vector<double> a, b;
    for (int piece = 0; piece < 40; ++piece) {
      const int n = 1 + (piece * 7) % 45;  // pieces of 1..45 numbers, crossing refills
      for (int i = 0; i < n; ++i) a.push_back(one.normal());
      std::vector<double> out(n);
      bulk.normals(out.data(), n);
      b.insert(b.end(), out.begin(), out.end());
      EXPECT_EQ(one.uniform(), bulk.uniform());
    }
    EXPECT_TRUE(same_bits(a, b));
  }
}

// StreamChunk::Batch computes 32 normals (16 blocks) and 4 uniforms (2 blocks) at a time.
// Its uniforms are fill_uniform's numbers, and its normals a fixed permutation of
// fill_normal's: normal 32g + 16w + b comes from word w of block c = 16g + b, which
// fill_normal puts at 128·⌊c/64⌋ + 64w + c mod 64 (rejections included: the slow path's
// secondary blocks depend only on the block and the word). So the law is fill_normal's,
// exactly; and the sequence is the same whatever the interleaving of the two kinds of draws.
TEST(RandomStream, BatchChunksArePermutedFills) {
  // uniform_first: the first refills are one fused Philox pass (normal.cpp).
  for (const bool uniform_first : {false, true})
  for (const StreamId id : {StreamId{13, Purpose::Train, 6, 2}, StreamId{2, Purpose::Train, 5, (uint64_t{1} << 32) + 9}}) {
    RandomStream rng(id, StreamChunk::Batch);
    const int n = 20000;  // 625 refills; 0.4 % of words (~80) are finished by the slow path
    std::vector<double> drawn_n, drawn_u;
    if (uniform_first) drawn_u.push_back(rng.uniform());
    for (int i = 0; i < n; ++i) {
      drawn_n.push_back(rng.normal());
      if (i % 3 == 0) drawn_u.push_back(rng.uniform());
    }
    StreamId normal_lane = id, uniform_lane = id;
    normal_lane.lane = 2 * id.lane + 1;
    uniform_lane.lane = 2 * id.lane;
    const auto fill = normals(normal_lane, 0, 4 * n);
    std::vector<double> permuted(n);
    for (int j = 0; j < n; ++j) {
      const int g = j / 32, w = (j % 32) / 16, c = 16 * g + j % 16;
      permuted[j] = fill[128 * (c / 64) + 64 * w + c % 64];
    }
    EXPECT_TRUE(same_bits(drawn_n, permuted));
    EXPECT_TRUE(same_bits(drawn_u, uniforms(uniform_lane, 0, drawn_u.size())));
  }
}
