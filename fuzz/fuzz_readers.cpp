// libFuzzer target: the readers of user text and of files a run reads back, on arbitrary
// bytes (docs/cli.md "Numbers", "Input files"). The first byte picks the reader:
//   0 a number (parse_decimal, parse_decimal_integer, parse_numbers),
//   1 a sweep grid (parse_grid, grid_points),
//   2 a checkpoint file (decode_checkpoint),
//   3 a sweep task record (deserialize_trajectory; round trip).
// Each input is either refused with the reader's error or gives a value that satisfies
// the reader's contract; anything else (a crash, another exception) is a finding.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/number_text.hpp"
#include "headspec/settings.hpp"
#include "headspec/sweep.hpp"

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_readers: %s\n", what);
  std::abort();
}

void numbers(const std::string& text) {
  try {
    require(std::isfinite(headspec::parse_decimal(text, "x")), "parse_decimal gave a non-finite number");
  } catch (const headspec::ParameterError&) {
  }
  try {
    const int64_t n = headspec::parse_decimal_integer(text, "x", -1000000, 1000000);
    require(n >= -1000000 && n <= 1000000, "parse_decimal_integer out of its range");
  } catch (const headspec::ParameterError&) {
  }
  try {
    for (double v : headspec::parse_numbers(text, "x")) require(std::isfinite(v), "parse_numbers gave a non-finite");
  } catch (const headspec::ParameterError&) {
  }
}

void grid(const std::string& text) {
  try {
    const auto axes = headspec::parse_grid(text, true);
    std::size_t points = 1;
    for (const auto& a : axes) {
      require(!a.values.empty(), "an axis without values");
      points *= a.values.size();
      if (points > 4096) return;  // valid but too large to expand here
    }
    const auto all = headspec::grid_points(axes, headspec::ModelSettings{}, 1000);
    require(all.size() == points, "grid_points count differs from the product of the axes");
  } catch (const headspec::UsageError&) {
  }
}

void checkpoint(const std::string& bytes) {
  static const std::string path = "fuzz_readers_" + std::to_string(::getpid()) + ".ckpt";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    headspec::decode_checkpoint(path, nlohmann::json{{"command", "fuzz"}});
  } catch (const headspec::UsageError&) {
  }
  std::remove(path.c_str());
}

void task(const std::string& bytes) {
  try {
    // What a reader accepted prints back to bytes that read back to the same bytes.
    const std::string once = headspec::serialize_trajectory(headspec::deserialize_trajectory(bytes));
    require(headspec::serialize_trajectory(headspec::deserialize_trajectory(once)) == once,
            "a task record does not round-trip");
  } catch (const std::runtime_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: numbers(rest); break;
    case 1: grid(rest); break;
    case 2: checkpoint(rest); break;
    default: task(rest); break;
  }
  return 0;
}
