#pragma once
// The theory's flags (docs/cli.md "headspec theory", "headspec sweep"): declared once, in
// theory_flag_parameters(), and held by `theory`, `sweep --engine theory|sde` and the Python
// keywords of both, so that a flag means the same wherever it is given.
#include <cstdint>
#include <string>

namespace headspec {

struct TheoryFlags {
  int64_t mc = 10000;                ///< Monte Carlo samples N per evaluation
  bool mc_resample = false;          ///< fresh samples at every step
  std::string mc_method = "auto";    ///< auto | plain | symmetric | sobol | laplace (docs/model.md §6)
  int64_t mc_seed = -1;              ///< −1: run k uses --seed + k
  std::string integrator;            ///< empty: rk4, or euler with --mc-resample
  double dt = 0.05;
  int64_t init_D = 10000;            ///< D of the finite-D initial state
  std::string init_engine = "dense";
  bool keep_R = false;               ///< keep R(0) and sample the value channel (docs/model.md §7 otherwise)
  double until_converged = 0;        ///< stop rules (docs/theory.md §3)
  double until_error_settled = 0;
  double error_window = 20;
  bool flow = false;                 ///< gradient flow: no η² term, time τ = ηt (docs/model.md §6)
  int64_t sde_mc = 0;                ///< the stochastic theory: plain samples of Σ (0: as many as the drift's)
  int64_t sde_reference_mc = 0;      ///< the stochastic theory: N° of the reference path (0: none)
};

}  // namespace headspec
