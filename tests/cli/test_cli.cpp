// The command-line contract (docs/cli.md): an output in a missing folder and malformed
// mixture files are refused up front; same seed gives byte-identical output whatever the
// thread count; the JSON sidecar holds every parameter.
// Bad flag values: test_cli_bad_input.cpp; divergences: test_divergence_cli.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

namespace {

TEST(Cli, OutputInMissingFolderIsRefusedUpFront) {
  const auto r = run_cli("simulate --D 200 --T 1 --out /nonexistent/dir/out.csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos);
}

TEST(Cli, MalformedMixtureFilesAreRefusedNamingTheLine) {
  const auto dir = fresh_dir("mixture");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"0.5 1 2\n0.5 1\n", ":2:"},      // ragged
      {"0.5 1 2\n-1 1 2\n", ":2:"},     // negative weight
      {"0.5 1 2\n0.5 1 z\n", ":2:"},    // not a number
      {"# only a comment\n", "no atoms"},
      {"0.5\n", ":1:"},                 // weight without atom
      {"0.5 1 nan\n", ":1:"},           // not finite
  };
  for (const auto& [content, needle] : cases) {
    const auto file = dir / "m.txt";
    std::ofstream(file) << content;
    const auto r = run_cli("simulate --D 200 --T 1 --prior mixture:" + file.string());
    EXPECT_EQ(r.status, 2) << content;
    EXPECT_NE(r.err.find("--prior"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Cli, SameSeedSameBytesWhateverTheThreadCount) {
  const auto dir = fresh_dir("det");
  // D = 2500 spans three coordinate chunks, so chunked sums are exercised.
  const std::string args = "simulate --D 2500 --L 4 --T 0.4 --runs 3 --test-samples 300 --record-every 0.1 --seed 5 --out ";
  for (const char* batch : {"1", "3"}) {
    const auto a = dir / "one.csv", b = dir / "two.csv";
    ASSERT_EQ(run_cli(args + a.string() + " --batch " + batch, "OMP_NUM_THREADS=1").status, 0);
    ASSERT_EQ(run_cli(args + b.string() + " --batch " + batch, "OMP_NUM_THREADS=2").status, 0);
    const auto ta = read_file(a), tb = read_file(b);
    EXPECT_FALSE(ta.empty());
    EXPECT_EQ(ta, tb) << "batch " << batch;
  }
  // A single run with D ≥ 64 chunks parallelises inside the step: also thread-independent.
  const auto big1 = dir / "big1.csv", big2 = dir / "big2.csv";
  const std::string big = "simulate --D 66000 --L 3 --H 2 --T 0.0005 --record-every 0.00025 --test-samples 50 --out ";
  ASSERT_EQ(run_cli(big + big1.string(), "OMP_NUM_THREADS=1").status, 0);
  ASSERT_EQ(run_cli(big + big2.string(), "OMP_NUM_THREADS=2").status, 0);
  EXPECT_EQ(read_file(big1), read_file(big2));
  const auto a = dir / "s1.csv", b = dir / "s2.csv";
  const std::string single = "simulate --D 5000 --L 4 --T 0.4 --record-every 0.1 --out ";
  ASSERT_EQ(run_cli(single + a.string(), "OMP_NUM_THREADS=1").status, 0);
  ASSERT_EQ(run_cli(single + b.string(), "OMP_NUM_THREADS=2").status, 0);
  EXPECT_EQ(read_file(a), read_file(b));
  // A different seed gives different numbers.
  const auto c = dir / "s3.csv";
  ASSERT_EQ(run_cli(single + c.string() + " --seed 2").status, 0);
  EXPECT_NE(read_file(a), read_file(c));
}

TEST(Cli, CsvColumnsAndSidecar) {
  const auto dir = fresh_dir("cols");
  const auto out = dir / "o.csv";
  const auto r = run_cli("simulate --D 500 --L 4 --T 0.2 --record-every 0.1 --H 3 --nu 1,2,3 --runs 2 --seed 9 --out " +
                       out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto text = read_file(out);
  const auto header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header,
            "run,t,loss,M_1_1,M_1_2,M_1_3,M_2_1,M_2_2,M_2_3,M_3_1,M_3_2,M_3_3,R_1,R_2,R_3,"
            "Q_1_1,Q_1_2,Q_1_3,Q_2_2,Q_2_3,Q_3_3,c_1,c_2,c_3,ortho_1,ortho_2,ortho_3,cos_1_2,cos_1_3,cos_2_3,loss_se");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 2 * 3);  // header + 2 runs × (t = 0, 0.1, 0.2)
  const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
  EXPECT_EQ(meta["model"]["H"], 3);
  EXPECT_EQ(meta["model"]["nu"].size(), 3u);
  EXPECT_EQ(meta["simulation"]["D"], 500);
  EXPECT_EQ(meta["simulation"]["seed"], 9);
  EXPECT_EQ(meta["simulation"]["runs"], 2);
  EXPECT_TRUE(meta.contains("version"));
  EXPECT_TRUE(meta.contains("git_revision"));
  // A fixed readout has no c columns.
  const auto r2 = run_cli("simulate --D 500 --L 4 --T 0.1 --record-every 0.1 --readout sum");
  ASSERT_EQ(r2.status, 0);
  EXPECT_EQ(r2.out.find(",c_1"), std::string::npos);
}

}  // namespace
