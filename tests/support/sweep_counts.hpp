#pragma once
// The counts `headspec sweep` reports on stderr (docs/cluster.md).
#include <array>
#include <regex>
#include <string>

namespace headspec::testing {

// "headspec: sweep: N runs: C computed …, R reused from DIR": {N, C, R}, or {-1, -1, -1}.
inline std::array<int, 3> counts(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"(sweep: (\d+) runs: (\d+) computed.*, (\d+) reused from)")))
    return {-1, -1, -1};
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

}  // namespace headspec::testing
