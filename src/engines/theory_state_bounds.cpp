// The states the theory engine refuses to evaluate at (docs/model.md §6, "Divergence"): an
// exploded state is reported as a divergence, at the time it was reached, instead of being
// evaluated — which laplace could not do within any memory (its rules grow with the scores'
// spread) and the sampled methods would do at a cost that hides the blow-up (ε = 10^250).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "headspec/budget.hpp"
#include "headspec/errors.hpp"
#include "headspec/theory_engine.hpp"
#include "laplace_quadrature.hpp"

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

double evaluation_bytes_limit(const TheoryOptions& options) {
  return options.max_evaluation_bytes > 0 ? options.max_evaluation_bytes : default_max_memory_gib() * 0.25 * 0x1p30;
}

}  // namespace

void TheoryEngine::check_evaluable(const OrderParameters& op, double t) const {
  const double bound = kExplodedScale * state_scale(model_);
  if (const std::string entry = exploded_entry(op, bound); !entry.empty())
    throw DivergenceError(fmt::format("the state exploded ({}, past {:.3g})", entry, bound), t);
  if (!laplace_) return;  // the sampled methods' cost does not depend on the state
  const laplace::LaplaceQuadrature::Cost cost = laplace_->cost(op);
  const double bytes = evaluation_bytes_limit(options_);
  if (!(cost.bytes <= bytes && cost.terms <= options_.max_evaluation_terms))
    throw DivergenceError(
        fmt::format("the state exploded (largest Q_hh = {:.3g}): laplace's rules there would need {:.3g} GiB and "
                    "{:.3g} terms for one evaluation, past {:.3g} GiB and {:.3g} (a genuine state that wide: "
                    "--mc-method sobol, whose cost does not grow with it)",
                    op.Q.diagonal().maxCoeff(), cost.bytes / 0x1p30, cost.terms, bytes / 0x1p30,
                    options_.max_evaluation_terms),
        t);
}

}  // namespace headspec
