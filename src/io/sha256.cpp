#include "headspec/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace headspec {

struct Sha256::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256: libcrypto could not start a digest");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t n) {
  if (n > 0 && EVP_DigestUpdate(ctx_->md, data, n) != 1) throw std::runtime_error("SHA-256: digest update failed");
}

std::array<uint8_t, 32> Sha256::finish() {
  std::array<uint8_t, 32> out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md, out.data(), &len) != 1 || len != out.size())
    throw std::runtime_error("SHA-256: digest failed");
  return out;
}

std::string to_hex(const uint8_t* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[bytes[i] >> 4];
    s[2 * i + 1] = digits[bytes[i] & 15];
  }
  return s;
}

std::string sha256_hex(const void* data, std::size_t n) {
  Sha256 h;
  h.update(data, n);
  const auto d = h.finish();
  return to_hex(d.data(), d.size());
}

}  // namespace headspec
