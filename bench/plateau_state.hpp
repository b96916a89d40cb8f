#pragma once
// The Fig. 1 setting's state at t = 40 (on the plateau, heads not yet split), from the
// initial state of `--init-engine gram --init-D 10000 --seed 1`, by the symmetric method
// with 2·10^5 samples: where the theory benchmarks compare their methods.
#include "headspec/engines.hpp"
#include "headspec/theory_integrator.hpp"
#include "headspec/theory_runs.hpp"

namespace headspec::bench {

inline OrderParameters plateau_state(const ModelSpec& m) {
  IntegrationSpec spec;
  spec.dt = 0.4;
  spec.T = 40;
  spec.record_every = 40;
  TheoryOptions o;
  o.samples = 200000;
  o.method = SamplingMethod::Symmetric;
  const TheoryResult r = run_theory(m, initial_state_factory("gram", m, 10000), o, spec, 1, 0);
  return r.trajectory.records.back().op;
}

}  // namespace headspec::bench
