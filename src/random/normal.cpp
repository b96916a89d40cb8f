// Gaussian and uniform fills. Every value is computed in a fixed group of kGroup normals
// (never in a remainder loop), so its bits depend only on its index in the stream.
#include <Random123/philox.h>
#include <Random123/uniform.hpp>

#include <algorithm>
#include "box_muller.hpp"
#include <cstring>

#include "headspec/random.hpp"

namespace headspec {
namespace {

using Philox = r123::Philox4x32;
constexpr std::size_t kBlocks = 64;               // Philox blocks per group
constexpr std::size_t kGroup = 2 * kBlocks;       // normals per group

Philox::key_type make_key(const StreamId& id) {
  return Philox::key_type{{id.seed, static_cast<uint32_t>(id.purpose)}};
}

// Counter of block b: (b, lane, step low, step high).
inline Philox::ctr_type make_ctr(const StreamId& id, uint64_t block) {
  return Philox::ctr_type{{static_cast<uint32_t>(block), id.lane, static_cast<uint32_t>(id.step),
                           static_cast<uint32_t>(id.step >> 32)}};
}

// The two 64-bit words of the blocks [first_block, first_block + kBlocks).
void philox_words(const StreamId& id, uint64_t first_block, uint64_t* w0, uint64_t* w1) {
  const Philox rng;
  const auto key = make_key(id);
  for (std::size_t b = 0; b < kBlocks; ++b) {
    const auto r = rng(make_ctr(id, first_block + b), key);
    w0[b] = (uint64_t(r[0]) << 32) | r[1];
    w1[b] = (uint64_t(r[2]) << 32) | r[3];
  }
}

// Group g holds normals [g*kGroup, (g+1)*kGroup): block b gives normals 2b and 2b+1.
void normal_group(const StreamId& id, uint64_t group, double* out) {
  alignas(64) uint64_t w0[kBlocks], w1[kBlocks];
  alignas(64) double u[kBlocks], v[kBlocks], c[kBlocks], s[kBlocks];
  philox_words(id, group * kBlocks, w0, w1);
  for (std::size_t b = 0; b < kBlocks; ++b) {
    u[b] = r123::u01<double>(w0[b]);     // (0, 1]: log never sees 0
    v[b] = r123::uneg11<double>(w1[b]);  // [-1, 1]
  }
  detail::box_muller(u, v, c, s, static_cast<int>(kBlocks));
  for (std::size_t b = 0; b < kBlocks; ++b) {
    out[2 * b] = c[b];
    out[2 * b + 1] = s[b];
  }
}

void uniform_group(const StreamId& id, uint64_t group, double* out) {
  alignas(64) uint64_t w0[kBlocks], w1[kBlocks];
  philox_words(id, group * kBlocks, w0, w1);
  for (std::size_t b = 0; b < kBlocks; ++b) {
    // u01 maps to (0, 1]; the top 53 bits plus a half ulp give the open interval.
    out[2 * b] = (double(w0[b] >> 11) + 0.5) * 0x1.0p-53;
    out[2 * b + 1] = (double(w1[b] >> 11) + 0.5) * 0x1.0p-53;
  }
}

template <class GroupFn>
void fill_grouped(const StreamId& id, uint64_t first, double* out, std::size_t n, GroupFn fn) {
  alignas(64) double tmp[kGroup];
  while (n > 0) {
    const uint64_t group = first / kGroup;
    const std::size_t offset = first % kGroup;
    const std::size_t take = std::min<std::size_t>(n, kGroup - offset);
    if (offset == 0 && take == kGroup) {
      fn(id, group, out);
    } else {
      fn(id, group, tmp);
      std::memcpy(out, tmp + offset, take * sizeof(double));
    }
    out += take;
    first += take;
    n -= take;
  }
}

}  // namespace

void fill_normal(const StreamId& id, uint64_t first, double* out, std::size_t n) {
  fill_grouped(id, first, out, n, normal_group);
}

void fill_uniform(const StreamId& id, uint64_t first, double* out, std::size_t n) {
  fill_grouped(id, first, out, n, uniform_group);
}

RandomStream::RandomStream(StreamId id) : uniform_id_(id), normal_id_(id) {
  uniform_id_.lane = 2 * id.lane;
  normal_id_.lane = 2 * id.lane + 1;
}

double RandomStream::uniform() {
  if (upos_ == kBuffer) {
    fill_uniform(uniform_id_, uniform_next_, ubuf_, kBuffer);
    uniform_next_ += kBuffer;
    upos_ = 0;
  }
  return ubuf_[upos_++];
}

double RandomStream::normal() {
  if (npos_ == kBuffer) {
    fill_normal(normal_id_, normal_next_, nbuf_, kBuffer);
    normal_next_ += kBuffer;
    npos_ = 0;
  }
  return nbuf_[npos_++];
}

uint32_t RandomStream::below(uint32_t n) {
  // floor(n u) with u in (0,1) of 53 bits: bias below 2^-21 for n < 2^32.
  const auto k = static_cast<uint32_t>(uniform() * n);
  return k < n ? k : n - 1;
}

}  // namespace headspec
