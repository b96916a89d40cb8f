// Gaussian and uniform fills. Every value is computed in a fixed group of kGroup normals
// (never in a remainder loop), so its bits depend only on its index in the stream.
#include <algorithm>
#include <cstring>

#include "box_muller.hpp"
#include "headspec/random.hpp"
#include "philox_blocks.hpp"

namespace headspec {
namespace {

constexpr std::size_t kBlocks = 64;               // Philox blocks per group
constexpr std::size_t kGroup = 2 * kBlocks;       // normals per group
static_assert(kBlocks % detail::kPhiloxBatch == 0, "a group is whole batches of the vectorised Philox");

// Key (seed, purpose); counter of block b: (b, lane, step low, step high).
detail::PhiloxStream philox_stream(const StreamId& id) {
  return {id.seed, static_cast<uint32_t>(id.purpose), id.lane, static_cast<uint32_t>(id.step),
          static_cast<uint32_t>(id.step >> 32)};
}

// Group g holds normals [g*kGroup, (g+1)*kGroup): block b gives normals 2b and 2b+1,
// Box–Muller on u01(w0) and uneg11(w1) of the block's two 64-bit words.
void normal_group(const detail::PhiloxStream& s, uint64_t group, double* out) {
  alignas(64) double u[kBlocks], v[kBlocks];
  detail::philox_uniform_pairs(s, static_cast<uint32_t>(group * kBlocks), kBlocks, u, v);
  detail::box_muller(u, v, out, static_cast<int>(kBlocks));
}

void uniform_group(const detail::PhiloxStream& s, uint64_t group, double* out) {
  detail::philox_open_uniforms(s, static_cast<uint32_t>(group * kBlocks), kBlocks, out);
}

template <class GroupFn>
void fill_grouped(const StreamId& id, uint64_t first, double* out, std::size_t n, GroupFn fn) {
  const detail::PhiloxStream s = philox_stream(id);
  alignas(64) double tmp[kGroup];
  while (n > 0) {
    const uint64_t group = first / kGroup;
    const std::size_t offset = first % kGroup;
    const std::size_t take = std::min<std::size_t>(n, kGroup - offset);
    if (offset == 0 && take == kGroup) {
      fn(s, group, out);
    } else {
      fn(s, group, tmp);
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
