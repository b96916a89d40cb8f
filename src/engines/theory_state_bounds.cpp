// The states the theory engine refuses to evaluate at (docs/model.md §6, "Divergence"): an
// exploded state is reported as a divergence, at the time it was reached, instead of being
// evaluated — which laplace could not do within any memory (its rules grow with the scores'
// spread) and the sampled methods would do at a cost that hides the blow-up (ε = 10^250).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "headspec/errors.hpp"
#include "headspec/theory_engine.hpp"
#include "expectation/expectation_method.hpp"

namespace headspec {

namespace {

// The scale of a state's order parameters: the initial key variance q0, the signal strengths ν_f
// (Q and M of a converging run stay within a few ν of it), and 1 for the readout.
double state_scale(const ModelSpec& model) {
  return std::max({1.0, model.q0, model.prior.nu().maxCoeff()});
}

// The first order parameter that is not finite or past `bound` in magnitude, named as in the
// CSV columns (docs/cli.md "CSV columns"); empty if none.
std::string exploded_entry(const OrderParameters& op, double bound) {
  auto bad = [&](double v) { return !(std::abs(v) <= bound); };
  for (Eigen::Index h = 0; h < op.Q.rows(); ++h) {
    for (Eigen::Index g = h; g < op.Q.cols(); ++g)
      if (bad(op.Q(h, g))) return fmt::format("Q_{}_{} = {:.3g}", h + 1, g + 1, op.Q(h, g));
    for (Eigen::Index f = 0; f < op.M.cols(); ++f)
      if (bad(op.M(h, f))) return fmt::format("M_{}_{} = {:.3g}", h + 1, f + 1, op.M(h, f));
    if (bad(op.R[h])) return fmt::format("R_{} = {:.3g}", h + 1, op.R[h]);
    if (bad(op.c[h])) return fmt::format("c_{} = {:.3g}", h + 1, op.c[h]);
  }
  return {};
}

}  // namespace

void TheoryEngine::check_evaluable(const OrderParameters& op, double t) const {
  const double bound = kExplodedScale * state_scale(model_);
  if (const std::string entry = exploded_entry(op, bound); !entry.empty())
    throw DivergenceError(fmt::format("the state exploded ({}, past {:.3g})", entry, bound), t);
  method_->check_cost(op, t);  // laplace's rules grow with the state; the sampled methods' cost does not
}

}  // namespace headspec
