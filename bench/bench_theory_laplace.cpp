// Accuracy per unit of CPU of the laplace method (docs/model.md §6, "Laplace quadrature")
// against plain Monte Carlo, at the Fig. 1 plateau state (plateau_state.hpp), with 1 and 2
// threads: the time of one evaluation of each; laplace's error, |default rule − a finer rule
// (32 nodes, step 0.35 in log u)|; plain's standard deviation at laplace's CPU time (its
// standard error at N, scaled by √(its time / laplace's)); their ratio; and laplace − plain in
// plain's standard errors (the two take the same expectations). Numbers: docs/theory.md §2.
//
//   bench_theory_laplace [N]   (plain's N, default 262144)
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "headspec/allocation.hpp"
#include "plateau_state.hpp"

using namespace headspec;

namespace {

// The right-hand side (then ε) and the seconds per evaluation, over `repeats` after a warm-up.
std::vector<double> timed(const TheoryEngine& engine, const OrderParameters& op, int repeats, double& seconds,
                          std::vector<double>* stderrs = nullptr) {
  TheoryEvaluation ev;
  engine.evaluate(op, 0, ev);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) engine.evaluate(op, 0, ev);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
  std::vector<double> v = ev.rate;
  v.push_back(ev.error);
  if (stderrs) {
    *stderrs = ev.rate_stderr;
    stderrs->push_back(ev.error_stderr);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  retain_freed_memory();  // as the program does (docs/performance.md, "Memory allocation")
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 262144;
  const ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, softmax, learned readout, η = 1
  const OrderParameters op = bench::plateau_state(m);
  TheoryOptions plain, laplace, fine;
  plain.samples = N;
  plain.method = SamplingMethod::Plain;
  laplace.method = fine.method = SamplingMethod::Laplace;
  fine.quadrature_nodes = 32;
  fine.quadrature_step = 0.35;
  double fine_seconds = 0;
  const std::vector<double> reference = timed(TheoryEngine(m, fine), op, 1, fine_seconds);
  std::vector<std::string> names;
  for (int h = 1; h <= 2; ++h)
    for (int f = 1; f <= 2; ++f) names.push_back("dM_" + std::to_string(h) + "_" + std::to_string(f));
  names.insert(names.end(), {"dR_1", "dR_2", "dQ_1_1", "dQ_1_2", "dQ_2_2", "dc_1", "dc_2", "eps"});
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    double t_plain = 0, t_laplace = 0;
    std::vector<double> se;
    const std::vector<double> mc = timed(TheoryEngine(m, plain), op, 3, t_plain, &se);
    const std::vector<double> q = timed(TheoryEngine(m, laplace), op, 3, t_laplace);
    std::printf("threads %d: ms per evaluation: plain (N = %lld) %.2f, laplace %.2f\n", threads,
                static_cast<long long>(N), 1e3 * t_plain, 1e3 * t_laplace);
    std::printf("%-8s %14s %12s %16s %12s %14s\n", "entry", "laplace", "its error", "plain sd, =CPU", "ratio",
                "(lap-plain)/se");
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (se[i] == 0) continue;  // dR: 0 with the value channel integrated out
      const double error = std::abs(q[i] - reference[i]);
      const double plain_sd = se[i] * std::sqrt(t_plain / t_laplace);
      std::printf("%-8s %14.10f %12.2e %16.2e %12.3g %14.2f\n", names[i].c_str(), q[i], error, plain_sd,
                  error > 0 ? plain_sd / error : INFINITY, (q[i] - mc[i]) / se[i]);
    }
  }
  return 0;
}
