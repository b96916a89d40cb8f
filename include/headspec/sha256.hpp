#pragma once
// SHA-256, for checking data files, caches and checkpoints against their digests: OpenSSL's
// libcrypto (EVP interface) behind a small incremental interface.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace headspec {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t n);
  /// The digest of everything passed to update; the object is spent afterwards.
  std::array<uint8_t, 32> finish();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

/// Lower-case hexadecimal SHA-256 of n bytes.
std::string sha256_hex(const void* data, std::size_t n);
std::string to_hex(const uint8_t* bytes, std::size_t n);

}  // namespace headspec
