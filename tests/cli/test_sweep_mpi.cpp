// `headspec sweep` over 2 MPI ranks (docs/cluster.md), compared byte for byte with the plain
// single-process sweep. Skipped, with the reason, when headspec is built without MPI.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_helpers.hpp"
#include "sweep_counts.hpp"

using namespace headspec::testing;
namespace fs = std::filesystem;

TEST(SweepMpi, TwoRanksWriteTheSingleProcessBytes) {
#ifndef HEADSPEC_MPIEXEC
  GTEST_SKIP() << "headspec is built without MPI (libopenmpi-dev not found by CMake)";
#else
  const auto dir = fresh_dir("sweep_mpi");
  const auto out = dir / "rows.csv", sum = dir / "summary.csv", work = dir / "work";
  // Runs of different lengths (the stop rule ends H = 2 runs at their specialisation), so
  // that which rank computes which run depends on timing.
  const std::string args = "sweep --engine gram --grid 'H=1:2;L=4,5' --nu 2,8 --D 2000 --T 12 --record-every 0.5 "
                           "--runs 4 --test-samples 50 --stop-when-specialised --out " + out.string() +
                           " --summary " + sum.string();
  auto outputs = [&] { return std::array{read_file(out), read_file(out.string() + ".json"), read_file(sum)}; };
  const std::string mpirun = std::string(HEADSPEC_MPIEXEC) + " --allow-run-as-root --oversubscribe --bind-to none -np 2";

  const auto single = run_cli(args, "OMP_NUM_THREADS=2");
  ASSERT_EQ(single.status, 0) << single.err;
  const auto expected = outputs();
  for (const auto& f : {out, fs::path(out.string() + ".json"), sum}) fs::remove(f);

  const auto ranks = run_cli(args, "OMP_NUM_THREADS=1 " + mpirun);
  ASSERT_EQ(ranks.status, 0) << ranks.err;
  // One line from rank 0 with what each rank computed; both took part.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ranks.err, m, std::regex(R"(16 runs: 16 computed \(rank 0: (\d+), rank 1: (\d+)\))")))
      << ranks.err;
  EXPECT_EQ(std::stoi(m[1]) + std::stoi(m[2]), 16);
  EXPECT_GT(std::stoi(m[2]), 0) << "rank 1 computed nothing";
  const auto got = outputs();
  EXPECT_EQ(got[0], expected[0]) << "tidy CSV";
  EXPECT_EQ(got[1], expected[1]) << "sidecar";
  EXPECT_EQ(got[2], expected[2]) << "summary";

  // Results computed by the ranks into a work folder are reused by a single process.
  const auto with_work = run_cli(args + " --work-dir " + work.string(), "OMP_NUM_THREADS=1 " + mpirun);
  ASSERT_EQ(with_work.status, 0) << with_work.err;
  EXPECT_EQ(counts(with_work.err), (std::array{16, 16, 0})) << with_work.err;
  const auto reuse = run_cli(args + " --work-dir " + work.string());
  EXPECT_EQ(counts(reuse.err), (std::array{16, 0, 16})) << reuse.err;
  EXPECT_EQ(read_file(out), expected[0]);
  EXPECT_EQ(read_file(sum), expected[2]);

  // A bad flag: one line (from rank 0), status 2, nothing written.
  fs::remove(out);
  const auto bad = run_cli("sweep --engine gram --grid 'H=0' --T 1 --out " + out.string(), mpirun);
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("headspec: error: --grid"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("headspec: error: --grid"), bad.err.rfind("headspec: error: --grid")) << bad.err;
  EXPECT_FALSE(fs::exists(out));
  // A refusal made while the flags are parsed, before MPI starts: once too (rank 0).
  const auto parse = run_cli("sweep --engine gram --T 1 --out " + out.string(), mpirun);
  EXPECT_EQ(parse.status, 2) << parse.err;
  EXPECT_NE(parse.err.find("headspec: error: --grid is required"), std::string::npos) << parse.err;
  EXPECT_EQ(parse.err.find("headspec: error:"), parse.err.rfind("headspec: error:")) << parse.err;
  EXPECT_FALSE(fs::exists(out));
#endif
}
