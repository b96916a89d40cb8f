// A diverging run (docs/cli.md "Errors"): status 3, a message naming the time and the
// learning rate, the rows recorded before it kept, the sidecar saying so.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"
#include "mnist_fixture.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

// A divergence stops every engine with status 3 and a message naming the time and the
// learning rate, keeping the rows recorded before it (docs/cli.md "Errors").
TEST(DivergenceCli, EveryEngineStopsWithStatus3AndKeepsItsRows) {
  const auto dir = fresh_dir("divergence_cli");
  std::vector<std::pair<std::string, std::string>> cases = {
      {"dense", "simulate --engine dense --D 300 --L 4 --T 50 --record-every 0.1 --activation linear --lr 1e3"},
      {"gram", "simulate --engine gram --D 300 --L 4 --T 50 --record-every 0.1 --activation linear --lr 1e3"},
      {"theory", "theory --mc-method sobol --L 4 --mc 500 --lr 1e3 --dt 0.5 --T 50 --record-every 0.5 --init-D 200"},
  };
  const std::string data = headspec::testing::real_mnist_dir();
  if (!data.empty())
    cases.push_back({"mnist", "mnist --data " + data +
                                  " --H 2 --L 4 --T 50 --record-every 0.1 --test-samples 50 --activation linear "
                                  "--lr 1e3"});
  for (const auto& [name, args] : cases) {
    SCOPED_TRACE(name);
    const fs::path out = dir / (name + ".csv");
    const auto r = run_cli(args + " --out " + out.string());
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_NE(r.err.find("diverged"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("at t = "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--lr (now 1000)"), std::string::npos) << r.err;
    const std::string csv = read_file(out);
    EXPECT_GE(count_lines(csv), 2) << "the row at t = 0 is kept";
    const auto meta = nlohmann::json::parse(read_file(out.string() + ".json"));
    EXPECT_TRUE(meta.contains("diverged") || meta["runs_summary"][0].contains("diverged_at")) << meta.dump();
  }
  if (data.empty()) GTEST_SKIP() << "data/mnist is absent: the MNIST engine's divergence was not tested";
  fs::remove_all(dir);
}
