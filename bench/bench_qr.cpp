// R of the thin QR in the reduced engine's step (include/headspec/householder.hpp, written
// out) against Eigen's HouseholderQR on fixed-size matrices (Matrix<double, L, H>, the
// library's alternative) and on dynamic ones, for the step's shapes: Ĝᵀ (L × H) and the
// re-orthonormalisation's 2H × H. The same matrices for all; the last lines print
// Eigen fixed / hand-written and Eigen dynamic / hand-written time ratios from this run.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "headspec/householder.hpp"

namespace {

constexpr int kMatrices = 64;  // cycled through, so the branch predictor does not learn one

template <int R, int C>
std::vector<Eigen::Matrix<double, R, C>> inputs() {
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal;
  std::vector<Eigen::Matrix<double, R, C>> out(kMatrices);
  for (auto& m : out)
    for (int j = 0; j < C; ++j)
      for (int i = 0; i < R; ++i) m(i, j) = normal(gen);
  return out;
}

std::map<std::string, double>& seconds_per_qr() {
  static std::map<std::string, double> m;
  return m;
}

template <int R, int C>
void BM_HandWritten(benchmark::State& state) {
  const auto in = inputs<R, C>();
  Eigen::Matrix<double, R, C> x;
  int k = 0;
  for (auto _ : state) {
    x = in[k++ % kMatrices];
    headspec::householder_r<R, C>(x.data());
    benchmark::DoNotOptimize(x.data());
  }
}

template <int R, int C>
void BM_EigenFixed(benchmark::State& state) {
  const auto in = inputs<R, C>();
  Eigen::HouseholderQR<Eigen::Matrix<double, R, C>> qr(R, C);
  int k = 0;
  for (auto _ : state) {
    qr.compute(in[k++ % kMatrices]);
    benchmark::DoNotOptimize(qr.matrixQR().data());
  }
}

template <int R, int C>
void BM_EigenDynamic(benchmark::State& state) {
  const auto fixed = inputs<R, C>();
  std::vector<Eigen::MatrixXd> in(fixed.begin(), fixed.end());
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(R, C);
  int k = 0;
  for (auto _ : state) {
    qr.compute(in[k++ % kMatrices]);
    benchmark::DoNotOptimize(qr.matrixQR().data());
  }
}

#define HEADSPEC_QR_SHAPE(R, C)                   \
  BENCHMARK(BM_HandWritten<R, C>)->MinTime(0.2);  \
  BENCHMARK(BM_EigenFixed<R, C>)->MinTime(0.2);   \
  BENCHMARK(BM_EigenDynamic<R, C>)->MinTime(0.2);

HEADSPEC_QR_SHAPE(5, 2)   // Ĝᵀ at L = 5, H = 2 (Fig. 6)
HEADSPEC_QR_SHAPE(10, 2)  // Ĝᵀ at L = 10 (Fig. 1)
HEADSPEC_QR_SHAPE(4, 2)   // the 2H × H re-orthonormalisation at H = 2

// Collects each run's time per QR for the ratios printed at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) seconds_per_qr()[r.run_name.function_name] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto& t = seconds_per_qr();
  for (const char* shape : {"<5, 2>", "<10, 2>", "<4, 2>"}) {
    const double hand = t[std::string("BM_HandWritten") + shape];
    if (hand <= 0) continue;
    std::printf("QR %s: Eigen fixed-size / hand-written = %.2f, Eigen dynamic / hand-written = %.2f\n", shape,
                t[std::string("BM_EigenFixed") + shape] / hand, t[std::string("BM_EigenDynamic") + shape] / hand);
  }
  benchmark::Shutdown();
  return 0;
}
