// Accuracy per unit of CPU of the theory's Monte Carlo methods (docs/model.md §6): the
// standard deviation over independent sample sets (8 unless asked) of every entry of the
// right-hand side at an unspecialised state of the Fig. 1 setting, and the time of one
// evaluation, for the plain and the symmetric methods; printed with the ratio of their
// standard deviations at equal CPU time, sd_plain / sd_method · √(time_plain / time_method),
// and beside each spread the mean standard error the method reported. A standard deviation
// over 8 sets is itself uncertain by about 27 % (and a ratio of two by about 40 %): more sets
// make the gains reliable. Numbers: docs/theory.md ("Monte Carlo methods").
//
//   bench_theory_accuracy [N [threads [randomisations [sets]]]]   (defaults N = 40000, 1 thread, 8, 8)
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "headspec/engines.hpp"
#include "headspec/theory_integrator.hpp"
#include "headspec/theory_runs.hpp"
#include "plateau_state.hpp"

using namespace headspec;

namespace {

struct Spread {
  std::vector<double> sd, reported;  // over the sets; the mean of the standard errors reported
  double seconds = 0;  // per evaluation
};

Spread spread_over_seeds(const ModelSpec& m, const OrderParameters& op, SamplingMethod method, int64_t N,
                         int randomisations, int sets) {
  std::vector<std::vector<double>> values;
  double seconds = 0;
  Spread s;
  for (int k = 0; k < sets; ++k) {
    TheoryOptions o;
    o.samples = N;
    o.method = method;
    o.randomisations = randomisations;
    o.seed = 1000 + static_cast<uint32_t>(k);
    const TheoryEngine engine(m, o);
    TheoryEvaluation ev;
    engine.evaluate(op, 0, ev);  // warm-up (first touch of the stored samples)
    const auto start = std::chrono::steady_clock::now();
    const int repeats = 5;
    for (int i = 0; i < repeats; ++i) engine.evaluate(op, 0, ev);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;
    std::vector<double> v = ev.rate;
    v.push_back(ev.error);
    values.push_back(v);
    std::vector<double> se = ev.rate_stderr;
    se.push_back(ev.error_stderr);
    if (k == 0) s.reported.assign(se.size(), 0.0);
    for (std::size_t i = 0; i < se.size(); ++i) s.reported[i] += se[i] / sets;
  }
  s.seconds = seconds / sets;
  for (std::size_t i = 0; i < values.front().size(); ++i) {
    double mean = 0, var = 0;
    for (const auto& v : values) mean += v[i] / sets;
    for (const auto& v : values) var += (v[i] - mean) * (v[i] - mean) / (sets - 1);
    s.sd.push_back(std::sqrt(var));
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 40000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const int randomisations = argc > 3 ? std::atoi(argv[3]) : TheoryOptions{}.randomisations;
  const int sets = argc > 4 ? std::max(2, std::atoi(argv[4])) : 8;
  const ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, softmax, learned readout, η = 1
  const OrderParameters op = bench::plateau_state(m);
  omp_set_num_threads(threads);
  std::printf("state: M = [[%.4f, %.4g], [%.4f, %.4g]], Q = [[%.4f, %.4f], [., %.4f]], c = (%.4f, %.4f)\n", op.M(0, 0),
              op.M(0, 1), op.M(1, 0), op.M(1, 1), op.Q(0, 0), op.Q(0, 1), op.Q(1, 1), op.c[0], op.c[1]);
  const std::vector<SamplingMethod> methods = {SamplingMethod::Plain, SamplingMethod::Symmetric, SamplingMethod::Sobol};
  std::vector<Spread> spreads;
  for (SamplingMethod method : methods) spreads.push_back(spread_over_seeds(m, op, method, N, randomisations, sets));
  std::vector<std::string> names;
  for (int h = 1; h <= 2; ++h)
    for (int f = 1; f <= 2; ++f) names.push_back("dM_" + std::to_string(h) + "_" + std::to_string(f));
  names.insert(names.end(), {"dR_1", "dR_2", "dQ_1_1", "dQ_1_2", "dQ_2_2", "dc_1", "dc_2", "eps"});
  std::printf("threads %d, N = %lld, %d sample sets; ms per evaluation:", threads, static_cast<long long>(N), sets);
  for (std::size_t k = 0; k < methods.size(); ++k) std::printf(" %s %.3f", to_string(methods[k]), 1e3 * spreads[k].seconds);
  std::printf("\n%-8s %12s", "entry", "sd plain");
  for (std::size_t k = 1; k < methods.size(); ++k) std::printf(" %12s %10s", (std::string("sd ") + to_string(methods[k])).c_str(), "gain");
  std::printf("   (gain: plain's sd over the method's at equal CPU time)\n");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (spreads[0].sd[i] == 0) continue;  // dR: 0 with the value channel integrated out
    std::printf("%-8s %12.3e (se %.2e)", names[i].c_str(), spreads[0].sd[i], spreads[0].reported[i]);
    for (std::size_t k = 1; k < methods.size(); ++k) {
      const Spread& s = spreads[k];
      const double gain = s.sd[i] > 0 ? spreads[0].sd[i] / s.sd[i] * std::sqrt(spreads[0].seconds / s.seconds) : INFINITY;
      std::printf(" %12.3e %10.2f (se %.2e)", s.sd[i], gain, s.reported[i]);
    }
    std::printf("\n");
  }
  return 0;
}
