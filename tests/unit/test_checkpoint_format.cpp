// The checkpoint file (docs/checkpoints.md): the byte format, and the file's checks (version,
// checksum, parameters).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "cli_helpers.hpp"
#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"

using namespace headspec;
namespace fs = std::filesystem;

namespace {

TEST(CheckpointFormat, ValuesRoundTripBitForBit) {
  StateWriter w;
  const double values[] = {-0.0, std::numeric_limits<double>::denorm_min(), 1.0 / 3.0, -1e308,
                           std::numeric_limits<double>::infinity()};
  for (double v : values) w.put_f64(v);
  w.put_i64(-5);
  w.put_string("abc");
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3, 4, 5, std::nextafter(6.0, 7.0);
  w.put_matrix(m);
  StateReader r(w.bytes());
  for (double v : values) {
    const double got = r.f64();
    EXPECT_EQ(std::memcmp(&got, &v, sizeof v), 0);
  }
  EXPECT_EQ(r.i64(), -5);
  EXPECT_EQ(r.string(), "abc");
  EXPECT_EQ(r.matrix(), m);
  EXPECT_TRUE(r.at_end());
  EXPECT_THROW(r.u64(), UsageError) << "reading past the end";
}

TEST(CheckpointFormat, FileRefusesDamageOtherVersionsAndOtherParameters) {
  const auto dir = headspec::testing::fresh_dir("ckpt_format");
  const std::string path = (dir / "c.ckpt").string();
  const nlohmann::json params = {{"model", {{"lr", 1.0}, {"H", 2}}}, {"command", "simulate"}};
  std::string state(1000, '\0');
  for (std::size_t i = 0; i < state.size(); ++i) state[i] = static_cast<char>(i * 7);
  const std::string file = encode_checkpoint(params, state);
  write_file_atomic(path, file);
  EXPECT_EQ(decode_checkpoint(path, params), state);

  auto refused = [&](const std::string& bytes, const nlohmann::json& p, const std::string& needle) {
    write_file_atomic(path, bytes);
    try {
      decode_checkpoint(path, p);
      ADD_FAILURE() << "accepted; expected: " << needle;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--resume: ", 0), 0u) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  // Every byte flipped in turn (a stride keeps it quick): refused, whatever it hit.
  for (std::size_t i = 0; i < file.size(); i += 13) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    refused(bad, params, "");
  }
  refused(file.substr(0, file.size() - 1), params, "SHA-256");
  refused(file.substr(0, 30), params, "");
  std::string other_version = file;
  const std::string format_line = "format " + std::to_string(kCheckpointFormat);
  other_version.replace(other_version.find(format_line), format_line.size(), "format 9");
  refused(other_version, params, "format 9");
  nlohmann::json other = params;
  other["model"]["lr"] = 2.0;
  refused(file, other, "model/lr: 1.0 there, 2.0 here");
  refused("", params, "not a headspec checkpoint");
  fs::remove_all(dir);
}

}  // namespace
