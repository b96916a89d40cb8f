// Philox4x32-10 (include/headspec/philox.hpp) against Random123's published known answers
// (kat_vectors) and its scalar r123::Philox4x32.
#include <gtest/gtest.h>

#include <Random123/philox.h>

#include <cstdint>
#include <random>
#include <vector>

#include "headspec/philox.hpp"

using namespace headspec;

// Random123's known-answer vectors for Philox4x32-10 (kat_vectors in its distribution).
TEST(Philox, PublishedKnownAnswers) {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}, {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const auto& k : kats) {
    // Run 40 blocks ending at the known counter, so that it goes through the vectorised path.
    std::vector<uint32_t> out(4 * 40);
    philox4x32_10(k.key[0], k.key[1], k.ctr[0] - 39, k.ctr[1], k.ctr[2], k.ctr[3], 40, out.data());
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[4 * 39 + j], k.out[j]) << "word " << j;
  }
}

// The vectorised paths against Random123's scalar Philox over random keys and counters,
// runs of every length 1..70 (batches of 32 and 16 blocks, then single blocks), and
// counters that wrap at 2^32.
TEST(Philox, MatchesRandom123Scalar) {
  std::mt19937 gen(2024);
  const r123::Philox4x32 scalar;
  std::size_t blocks = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const uint32_t k0 = gen(), k1 = gen(), c1 = gen(), c2 = gen(), c3 = gen();
    const uint32_t c0 = trial % 4 == 0 ? 0xFFFFFFFFu - (gen() % 40) : gen();  // some runs wrap
    const std::size_t n = 1 + trial % 70;
    std::vector<uint32_t> out(4 * n);
    philox4x32_10(k0, k1, c0, c1, c2, c3, n, out.data());
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = scalar(r123::Philox4x32::ctr_type{{c0 + static_cast<uint32_t>(i), c1, c2, c3}},
                            r123::Philox4x32::key_type{{k0, k1}});
      for (int j = 0; j < 4; ++j) ASSERT_EQ(out[4 * i + j], r[j]) << "trial " << trial << " block " << i << " word " << j;
    }
    blocks += n;
  }
  EXPECT_GT(blocks, 10000u);
  RecordProperty("philox_instruction_set", philox_instruction_set());
}
