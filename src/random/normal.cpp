// Gaussian and uniform fills. Every value is computed in a fixed group of kGroup normals
// (never in a remainder loop), so its bits depend only on its index in the stream.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <Random123/philox.h>

#include "headspec/random.hpp"
#include "philox_blocks.hpp"
#include "ziggurat.hpp"

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

// Normals by the ziggurat (ziggurat.hpp). Group g holds normals [g*kGroup, (g+1)*kGroup):
// normal g*kGroup + h*kBlocks + b (h = 0, 1) is driven by the 64-bit word w_h of block
// g*kBlocks + b (w0 = r0·2^32 + r1, w1 = r2·2^32 + r3). A word whose first attempt is not
// accepted at once is finished by ziggurat_slow, which draws everything else it needs from
// the value's own secondary blocks: block a has the counter of the main block and the key
// (seed, 2^31 + h·2^30 + a·2^8 + purpose), a key no main stream has. Attempt a uses block a:
// its w0 is the wedge's uniform (or the tail's first) and its w1 the next attempt's word
// (or the tail's second uniform; the tail's loop goes on with blocks a + 1, …).
static_assert(static_cast<uint32_t>(Purpose::Bayes) < 256, "the purpose fits in the low byte of the secondary key");

double open_uniform(uint64_t w) { return (static_cast<double>(w >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)

double ziggurat_slow(const detail::PhiloxStream& s, uint32_t block, unsigned h, uint64_t w) {
  const detail::ZigguratTables& t = detail::ziggurat_tables();
  uint32_t r[4];
  uint32_t a = 0;  // the next secondary block
  const auto secondary = [&] {
    const uint32_t key = 0x80000000u | (h << 30) | ((a & 0x3FFFFFu) << 8) | s.k1;
    const auto out = r123::Philox4x32()(r123::Philox4x32::ctr_type{{block, s.c1, s.c2, s.c3}},
                                        r123::Philox4x32::key_type{{s.k0, key}});
    for (int j = 0; j < 4; ++j) r[j] = out[j];
    ++a;
  };
  for (;;) {
    bool rejected;
    const double x = detail::ziggurat_fast(t, w, &rejected);
    if (!rejected) return x;
    const unsigned i = static_cast<unsigned>(w & (detail::kZigLayers - 1));
    const bool negative = (w >> detail::kZigguratBits) & 1;
    if (i == 0) {  // the tail beyond r (Marsaglia 1964): r + e1/r given 2 e2 > (e1/r)²
      for (;;) {
        secondary();
        const double e1 = -std::log(open_uniform((uint64_t(r[0]) << 32) | r[1])) / t.r;
        const double e2 = -std::log(open_uniform((uint64_t(r[2]) << 32) | r[3]));
        if (e2 + e2 > e1 * e1) return negative ? -(t.r + e1) : t.r + e1;
      }
    }
    secondary();
    const double ax = std::fabs(x);
    const double y = t.f[i] + open_uniform((uint64_t(r[0]) << 32) | r[1]) * (t.f[i + 1] - t.f[i]);
    if (y < std::exp(-0.5 * ax * ax)) return x;
    w = (uint64_t(r[2]) << 32) | r[3];
  }
}

// The words of blocks [c0, c0 + blocks) that ziggurat_blocks left rejected (bits of reject)
// finished by the slow path.
void finish_rejected(const detail::PhiloxStream& s, uint32_t c0, std::size_t blocks, double* out, const uint64_t* reject) {
  for (unsigned h = 0; h < 2; ++h)
    for (uint64_t m = reject[h]; m != 0; m &= m - 1) {
      const unsigned b = static_cast<unsigned>(__builtin_ctzll(m));
      double& x = out[h * blocks + b];
      uint64_t w;  // ziggurat_blocks left the word here
      std::memcpy(&w, &x, sizeof w);
      x = ziggurat_slow(s, c0 + b, h, w);
    }
}

// The 2·blocks normals of blocks [c0, c0 + blocks): word h of block c0 + b gives out[h·blocks + b].
void normal_blocks(const detail::PhiloxStream& s, uint32_t c0, std::size_t blocks, double* out) {
  uint64_t reject[2];
  detail::ziggurat_blocks(s, c0, blocks, detail::ziggurat_tables().x, out, out + blocks, reject);
  finish_rejected(s, c0, blocks, out, reject);
}

void normal_group(const detail::PhiloxStream& s, uint64_t group, double* out) {
  normal_blocks(s, static_cast<uint32_t>(group * kBlocks), kBlocks, out);
}

// StreamChunk::Batch: normals in groups of one vectorised Philox batch, uniforms 2 blocks at a time.
constexpr std::size_t kBatchBlocks = detail::kPhiloxBatch;
constexpr int kBatchNormals = 2 * kBatchBlocks;
constexpr int kBatchUniforms = 4;

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

static_assert(kBatchNormals <= 128 && kBatchUniforms % 2 == 0 && kBatchUniforms <= 8, "a refill fits RandomStream's buffers");

RandomStream::RandomStream(StreamId id, StreamChunk chunk)
    : uniform_id_(id),
      normal_id_(id),
      chunk_(chunk),
      ulen_(chunk == StreamChunk::Group ? kBuffer : kBatchUniforms),
      nlen_(chunk == StreamChunk::Group ? kBuffer : kBatchNormals),
      upos_(ulen_),
      npos_(nlen_) {
  uniform_id_.lane = 2 * id.lane;
  normal_id_.lane = 2 * id.lane + 1;
}

void RandomStream::refill_uniforms() {
  if (chunk_ == StreamChunk::Group) {
    fill_uniform(uniform_id_, uniform_next_, ubuf_, kBuffer);
  } else if (uniform_next_ == 0 && normal_next_ == 0) {
    // A Batch stream whose first draw is a uniform (a step of the reduced engine begins with
    // ℓ*): its first 32 normals are computed in the same Philox pass as these uniforms (the
    // two sub-lanes differ only in counter word 1), the same numbers as two refills.
    const detail::PhiloxStream s = philox_stream(normal_id_);
    uint64_t reject[2];
    double u[8];
    detail::ziggurat_blocks_with_uniforms(s, 0, detail::ziggurat_tables().x, nbuf_, nbuf_ + kBatchBlocks, reject,
                                          uniform_id_.lane, 0, u);
    finish_rejected(s, 0, kBatchBlocks, nbuf_, reject);
    std::memcpy(ubuf_, u, kBatchUniforms * sizeof(double));
    normal_next_ = nlen_;
    npos_ = 0;
  } else {  // the same numbers as fill_uniform's, without computing its whole group
    detail::philox_open_uniforms(philox_stream(uniform_id_), static_cast<uint32_t>(uniform_next_ / 2),
                                 kBatchUniforms / 2, ubuf_);
  }
  uniform_next_ += ulen_;
  upos_ = 0;
}

void RandomStream::refill_normals() {
  if (chunk_ == StreamChunk::Group)
    fill_normal(normal_id_, normal_next_, nbuf_, kBuffer);
  else
    normal_blocks(philox_stream(normal_id_), static_cast<uint32_t>(normal_next_ / kBatchNormals * kBatchBlocks),
                  kBatchBlocks, nbuf_);
  normal_next_ += nlen_;
  npos_ = 0;
}


uint32_t RandomStream::below(uint32_t n) {
  // floor(n u) with u in (0,1) of 53 bits: bias below 2^-21 for n < 2^32.
  const auto k = static_cast<uint32_t>(uniform() * n);
  return k < n ? k : n - 1;
}

}  // namespace headspec
