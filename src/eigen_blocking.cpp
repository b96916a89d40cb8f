#include "headspec/eigen_blocking.hpp"

#include <Eigen/Core>

namespace headspec {

namespace {
// L1, L2, L3 in bytes: the blocking these give is Eigen's on a processor with 32 KiB of L1
// data cache, which gave the outputs recorded in tests/golden/checksums.txt.
constexpr std::ptrdiff_t kL1 = 32 * 1024, kL2 = 1024 * 1024, kL3 = 32 * 1024 * 1024;
}  // namespace

void fix_eigen_blocking() {
  // Written only when they differ (the first call, made before any thread starts), so the
  // engines' calls from parallel runs only read them.
  if (Eigen::l1CacheSize() != kL1 || Eigen::l2CacheSize() != kL2 || Eigen::l3CacheSize() != kL3)
    Eigen::setCpuCacheSizes(kL1, kL2, kL3);
}

}  // namespace headspec
