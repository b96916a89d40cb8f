// Cost of one Fig. 6 run to its specialisation time (flip ν = (2, 2), L = 5, H = 2, softmax,
// learned readout, η = 1, δ = 0.2): the stochastic theory (docs/model.md §12) against the
// exact reduced engine (§9) at D = 10^4 and 10^5, and the stochastic theory alone at 10^12,
// where the reduced engine would take 10^8 times as long. CPU time on one thread, the mean
// over the same seeds for both, and the ratio gram / SDE printed in one run, per run and per
// unit of t (the two engines' runs specialise at different t, their noise differing). With a
// reference path (--sde-reference-mc N°) its cost, once for every run and D, is printed apart
// and the ratio given with it shared by 1 and by 200 runs. Numbers: docs/stochastic-theory.md
// ("Cost", §6).
//
//   bench_sde [runs [N [N_sigma [dt [integrator [N_ref]]]]]]
//     defaults 3 runs, N = 1024 samples, Σ from N_sigma plain samples (--sde-mc; 0: N), dt = 0.5,
//     heun (or euler), no reference path (N_ref = 0); records every max(0.5, dt). All runs use
//     the samples of seed 1, as `sweep --engine sde` does.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "headspec/engines.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/theory_reference.hpp"
#include "headspec/theory_runs.hpp"

using namespace headspec;

namespace {

constexpr double kT = 4000, kEvery = 0.5, kDelta = 0.2;  // τ ≈ 1500 ± 220 at D = 10^12

ModelSpec fig6_model() {
  ModelSpec m;
  m.L = 5;
  return m;
}

struct Timing {
  double seconds = 0, tau = 0;  // means over the runs
};

double tau_of(const Trajectory& tr) { return specialisation_times(tr.records, kDelta)[1]; }

Timing gram_runs(const ModelSpec& m, int64_t D, int runs) {
  SimulationSpec sim;
  sim.D = D;
  sim.T = kT;
  sim.record_every = kEvery;
  sim.test_samples = 100;
  sim.stop_when_specialised = kDelta;
  Timing t;
  for (int k = 0; k < runs; ++k) {
    const auto start = std::chrono::steady_clock::now();
    const Trajectory tr = run_sgd(sgd_engine_factory("gram", m, D), m, sim, k);
    t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
    t.tau += tau_of(tr) / runs;
  }
  return t;
}

struct SdeScheme {
  int64_t N, N_sigma, N_ref;
  double dt;
  Integrator integrator;
  std::shared_ptr<const ReferencePath> path;
};

TheoryOptions drift_options(const SdeScheme& scheme) {
  TheoryOptions mc;
  mc.samples = scheme.N;
  mc.method = SamplingMethod::Sobol;
  mc.seed = 1;
  return mc;
}

IntegrationSpec sde_spec(const SdeScheme& scheme, int64_t D) {
  IntegrationSpec spec;
  spec.method = scheme.integrator;
  spec.dt = scheme.dt;
  spec.T = kT;
  spec.record_every = std::max(kEvery, scheme.dt);
  spec.stop_when_specialised = kDelta;
  spec.finite_D = static_cast<double>(D);
  spec.diffusion_samples = scheme.N_sigma;
  spec.reference_samples = scheme.N_ref;
  spec.reference = scheme.path;
  return spec;
}

Timing sde_runs(const ModelSpec& m, int64_t D, int runs, const SdeScheme& scheme) {
  const IntegrationSpec spec = sde_spec(scheme, D);
  Timing t;
  for (int k = 0; k < runs; ++k) {
    const auto start = std::chrono::steady_clock::now();
    const TheoryResult r = run_theory(m, sgd_engine_factory("gram", m, D), drift_options(scheme), spec, 1, k, 1u);
    t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
    t.tau += tau_of(r.trajectory) / runs;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  SdeScheme scheme;
  scheme.N = argc > 2 ? std::atoll(argv[2]) : 1024;
  scheme.N_sigma = argc > 3 ? std::atoll(argv[3]) : 0;
  scheme.dt = argc > 4 ? std::atof(argv[4]) : 0.5;
  scheme.integrator = parse_integrator(argc > 5 ? argv[5] : "heun");
  scheme.N_ref = argc > 6 ? std::atoll(argv[6]) : 0;
  omp_set_num_threads(1);
  const ModelSpec m = fig6_model();
  double path_seconds = 0;
  if (scheme.N_ref > 0) {
    const auto start = std::chrono::steady_clock::now();
    scheme.path = make_reference_path(m, drift_options(scheme), sde_spec(scheme, 0));
    path_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("reference path: N = %lld, T = %g, %.2f s once (every run and D)\n", static_cast<long long>(scheme.N_ref),
                kT, path_seconds);
  }
  std::printf("one run to tau_2 (seeds 1..%d), one thread; SDE: sobol N = %lld, Sigma from %lld plain samples, %s "
              "dt = %g\n",
              runs, static_cast<long long>(scheme.N), static_cast<long long>(scheme.N_sigma > 0 ? scheme.N_sigma : scheme.N),
              to_string(scheme.integrator), scheme.dt);
  std::printf("%8s %12s %10s %12s %10s %10s %12s %14s %14s\n", "D", "gram s/run", "gram tau", "sde s/run", "sde tau",
              "ratio", "ratio per t", "ratio, path/1", "ratio, path/200");
  for (const int64_t D : {int64_t{10000}, int64_t{100000}}) {
    const Timing g = gram_runs(m, D, runs), s = sde_runs(m, D, runs, scheme);
    std::printf("%8.0e %12.3f %10.1f %12.4f %10.1f %10.1f %12.1f %14.1f %14.1f\n", static_cast<double>(D), g.seconds,
                g.tau, s.seconds, s.tau, g.seconds / s.seconds, (g.seconds / g.tau) / (s.seconds / s.tau),
                g.seconds / (s.seconds + path_seconds), g.seconds / (s.seconds + path_seconds / 200));
  }
  const Timing far = sde_runs(m, 1000000000000, runs, scheme);
  std::printf("%8.0e %12s %10s %12.4f %10.1f %10s\n", 1e12, "-", "-", far.seconds, far.tau, "-");
  return 0;
}
