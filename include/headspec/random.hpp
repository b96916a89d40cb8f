#pragma once
// Counter-based random numbers (Philox4x32-10 from Random123).
//
// Every number is a pure function of (seed, purpose, lane, step, index): streams never
// share state, so results do not depend on the order in which threads draw them.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace headspec {

/// What a stream is used for; part of the Philox key, so purposes never overlap.
enum class Purpose : uint32_t {
  KeyInit = 1,     ///< initial keys
  Train = 2,       ///< training samples
  Test = 3,        ///< fresh samples for the population error
  MonteCarlo = 4,  ///< samples of the theory's expectations
  Data = 5,        ///< data-set manipulations (splits, choices)
  Bayes = 6,       ///< samples of the Bayes-optimal error
  SymmetricMonteCarlo = 7,  ///< base samples of the theory's symmetric method (one per orbit)
  Diffusion = 8,            ///< the Brownian increments of the stochastic theory (docs/model.md §12)
};

/// Identity of one stream: seed (32 bits), purpose, lane (32 bits), step (64 bits).
struct StreamId {
  uint32_t seed = 1;
  Purpose purpose = Purpose::Train;
  uint32_t lane = 0;
  uint64_t step = 0;
};

/// Writes out[i] = N(0,1) number (first + i) of the stream, i < n. Each value depends only
/// on (id, index): filling [0, 100) at once or in pieces gives the same bits.
/// A 256-layer ziggurat, exact up to double rounding, on the 64-bit words of Philox blocks;
/// the rare rejections draw from the value's own secondary blocks (src/random/normal.cpp).
void fill_normal(const StreamId& id, uint64_t first, double* out, std::size_t n);

/// Writes out[i] = U(0,1) number (first + i) of the stream (53-bit, never 0 or 1).
void fill_uniform(const StreamId& id, uint64_t first, double* out, std::size_t n);

/// How many numbers a RandomStream computes at a time.
enum class StreamChunk {
  /// 128 normals and 128 uniforms: the numbers of fill_normal and fill_uniform.
  Group,
  /// 32 normals (16 Philox blocks, one vectorised batch) and 4 uniforms (2 blocks), for
  /// streams that draw a few dozen numbers (a step of the reduced engine). The uniforms are
  /// fill_uniform's numbers (uniform j is word j mod 2 of block j/2 in both layouts); the
  /// normals are fill_normal's numbers in another order — normal 32g + 16w + b is the one
  /// of word w of block 16g + b (fill_normal groups 64 blocks, Batch 16) — so they have
  /// fill_normal's law exactly, and normals 0..15 are fill_normal's 0..15.
  Batch,
};

/// Sequential scalar draws from one stream (uniforms and normals come from two
/// sub-lanes of it, so interleaving them never makes two draws share bits).
class RandomStream {
 public:
  explicit RandomStream(StreamId id, StreamChunk chunk = StreamChunk::Group);
  double uniform() {  ///< U(0,1), open interval
    if (upos_ == ulen_) refill_uniforms();
    return ubuf_[upos_++];
  }
  double normal() {  ///< N(0,1)
    if (npos_ == nlen_) refill_normals();
    return nbuf_[npos_++];
  }
  /// out[i] = the next n normal() draws, copied a refill at a time (the same numbers).
  void normals(double* out, int n) {
    while (n > 0) {
      if (npos_ == nlen_) refill_normals();
      const int take = n < nlen_ - npos_ ? n : nlen_ - npos_;
      std::memcpy(out, nbuf_ + npos_, static_cast<std::size_t>(take) * sizeof(double));
      npos_ += take;
      out += take;
      n -= take;
    }
  }
  uint32_t below(uint32_t n);     ///< uniform integer in [0, n)
  bool coin() { return uniform() < 0.5; }

 private:
  void refill_uniforms();
  void refill_normals();

  StreamId uniform_id_, normal_id_;
  StreamChunk chunk_;
  uint64_t uniform_next_ = 0, normal_next_ = 0;
  static constexpr int kBuffer = 128;  // one whole group of fill_normal
  double ubuf_[kBuffer], nbuf_[kBuffer];
  int ulen_, nlen_;  // numbers per refill
  int upos_, npos_;
};

}  // namespace headspec
