#pragma once
// SHA-256 (FIPS 180-4), for checking data files and caches against pinned digests.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace headspec {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t n);
  /// The digest of everything passed to update; the object is spent afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  uint8_t buf_[64];
  std::size_t used_ = 0;
  uint64_t bytes_ = 0;
};

/// Lower-case hexadecimal SHA-256 of n bytes.
std::string sha256_hex(const void* data, std::size_t n);
std::string to_hex(const uint8_t* bytes, std::size_t n);

}  // namespace headspec
