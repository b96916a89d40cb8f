// The laplace method of the theory engine (docs/model.md §6, "Laplace quadrature"): the rates
// of docs/theory.md §1 from the quadrature's expectations of their integrands.
#include <fmt/format.h>

#include <string>

#include "../laplace_quadrature.hpp"
#include "../theory_evaluation.hpp"
#include "expectation_method.hpp"
#include "headspec/budget.hpp"
#include "headspec/errors.hpp"
#include "headspec/symmetry_group.hpp"

namespace headspec {

namespace {

// Why laplace's quadrature cannot take this model's expectations with these options, or
// nothing when it can.
std::string laplace_obstacle(const ModelSpec& model, const TheoryOptions& options) {
  if (!laplace::LaplaceQuadrature::covers(model))
    return "laplace needs softmax or softmax-1 with at most 2 heads (docs/model.md §6)";
  if (options.channel == ValueChannel::Sampled)
    return "laplace needs the value channel integrated out (not with --keep-R)";
  if (options.mode == MonteCarloMode::Resample) return "laplace has no samples to draw afresh (not with --mc-resample)";
  return {};
}

}  // namespace

SamplingMethod resolved_method(const ModelSpec& model, const TheoryOptions& options) {
  if (options.method != SamplingMethod::Auto) return options.method;
  return laplace_obstacle(model, options).empty() ? SamplingMethod::Laplace : SamplingMethod::Sobol;
}

TheoryOptions coarser_rule(const TheoryOptions& options) {
  TheoryOptions coarse = options;
  coarse.quadrature_nodes = (2 * options.quadrature_nodes) / 3;
  coarse.quadrature_step = 1.5 * options.quadrature_step;
  return coarse;
}

void check_laplace_options(const ModelSpec& model, const TheoryOptions& options) {
  const std::string obstacle = laplace_obstacle(model, options);
  if (!obstacle.empty()) throw ParameterError("mc-method", obstacle);
}

namespace expectation {

namespace {

double evaluation_bytes_limit(const TheoryOptions& options) {
  return options.max_evaluation_bytes > 0 ? options.max_evaluation_bytes : default_max_memory_gib() * 0.25 * 0x1p30;
}

// The laplace method: no samples; the state in its canonical head order.
class LaplaceMethod final : public ExpectationMethod {
 public:
  LaplaceMethod(const ModelSpec& model, const TheoryOptions& options)
      : model_(model),
        options_(options),
        layout_(model.H, model.F(), model.readout == Readout::Learned),
        quadrature_(model, options.quadrature_nodes, options.quadrature_step),
        group_(model) {}
  void evaluate(const OrderParameters& op, uint64_t, TheoryEvaluation& out, double t) const override {
    evaluate_in_canonical_order(group_, layout_, op, out, [&](const OrderParameters& canonical, TheoryEvaluation& o) {
      evaluate_canonical(canonical, o, t);
    });
  }
  int64_t samples_used() const override { return 0; }
  void check_cost(const OrderParameters& op, double t) const override;

 private:
  void evaluate_canonical(const OrderParameters& op, TheoryEvaluation& out, double t) const;

  ModelSpec model_;
  TheoryOptions options_;
  StateLayout layout_;
  laplace::LaplaceQuadrature quadrature_;
  SymmetryGroup group_;
};

}  // namespace

// The rules grow with the scores' spread: past the options' bounds the state has exploded
// (docs/model.md §6, "Divergence"), reported before anything is allocated.
void LaplaceMethod::check_cost(const OrderParameters& op, double t) const {
  const laplace::LaplaceQuadrature::Cost cost = quadrature_.cost(op);
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

void LaplaceMethod::evaluate_canonical(const OrderParameters& op, TheoryEvaluation& out, double t) const {
  const std::vector<double> E = quadrature_.expectations(op);
  theory_rates::RateConstants k;
  theory_evaluation::set_rate_scales(model_, options_.flow, t, k);
  const int H = model_.H, F = model_.F();
  const double delta = model_.noise;
  // E's order (laplace_quadrature.hpp): |e|², μ_h, Σ P λ, then per pair drift, Σ Φ·Φ, |e|² Σ Φ·Φ + 2 Σ P P.
  const std::size_t mu_at = 1, key_at = mu_at + H, pair_at = key_at + static_cast<std::size_t>(H * F);
  out.rate.assign(layout_.size(), 0.0);
  out.rate_stderr.assign(layout_.size(), 0.0);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) out.rate[layout_.m_index(h, f)] = -k.drift * E[key_at + h * F + f];
  std::size_t p = pair_at;
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g, p += 3)
      out.rate[layout_.q_index(h, g)] = -k.drift * E[p] + k.noise * (E[p + 2] + delta * E[p + 1]);
  if (layout_.learned_readout())
    for (int h = 0; h < H; ++h) out.rate[layout_.c_index(h)] = -k.readout_drift * E[mu_at + h];
  out.error = E[0] + delta;
  out.error_stderr = 0;
}


std::shared_ptr<const ExpectationMethod> make_laplace(const ModelSpec& model, const TheoryOptions& options) {
  check_laplace_options(model, options);
  return std::make_shared<const LaplaceMethod>(model, options);
}

}  // namespace expectation

}  // namespace headspec
