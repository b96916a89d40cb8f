// The registry of expectation methods (expectation_method.hpp) and what they share.
#include <array>
#include <stdexcept>

#include "expectation_method.hpp"
#include "headspec/name_table.hpp"
#include "headspec/symmetry_group.hpp"

namespace headspec {

namespace expectation {
namespace {

// One row per method: adding a method is its own file and one row here (and its name in
// SamplingMethod).
constexpr std::array<MethodEntry, 4> kMethods{{
    {SamplingMethod::Plain, "plain", make_plain, plain_samples_used, plain_stored_bytes},
    {SamplingMethod::Symmetric, "symmetric", make_symmetric, symmetric_samples_used, symmetric_stored_bytes},
    {SamplingMethod::Sobol, "sobol", make_symmetric, symmetric_samples_used, symmetric_stored_bytes},
    {SamplingMethod::Laplace, "laplace", make_laplace, no_samples, nothing_stored},
}};

// Packed rates of the canonical state (head h = head perm[h] of the state asked for) back in
// the state's own head order.
void unpermute(const StateLayout& lay, const std::vector<int>& perm, const std::vector<double>& in,
               std::vector<double>& out) {
  const int H = lay.H(), F = lay.F();
  out.resize(in.size());
  for (int h = 0; h < H; ++h) {
    for (int f = 0; f < F; ++f) out[lay.m_index(perm[h], f)] = in[lay.m_index(h, f)];
    out[lay.r_index(perm[h])] = in[lay.r_index(h)];
    for (int g = h; g < H; ++g) out[lay.q_index(perm[h], perm[g])] = in[lay.q_index(h, g)];
    if (lay.learned_readout()) out[lay.c_index(perm[h])] = in[lay.c_index(h)];
  }
}

}  // namespace

const MethodEntry& method_entry(SamplingMethod method) {
  for (const MethodEntry& e : kMethods)
    if (e.method == method) return e;
  throw std::logic_error("no expectation method for --mc-method auto: resolve it first (resolved_method)");
}

std::span<const MethodEntry> registered_methods() { return kMethods; }

void ExpectationMethod::check_cost(const OrderParameters&, double) const {}

void ExpectationMethod::rate_covariance(const OrderParameters&, Eigen::MatrixXd&, double) const {
  throw std::logic_error("rate_covariance needs the plain method with the value channel sampled");
}

int64_t no_samples(const ModelSpec&, const TheoryOptions&) { return 0; }

double nothing_stored(const ModelSpec&, const TheoryOptions&) { return 0; }

int plain_batch_width(const ModelSpec& model, ValueChannel channel) {
  return model.L * (model.F() + model.H) + (channel == ValueChannel::Sampled ? model.L + 1 : 0);
}

void evaluate_in_canonical_order(const SymmetryGroup& group, const StateLayout& layout, const OrderParameters& op,
                                 TheoryEvaluation& out,
                                 const std::function<void(const OrderParameters&, TheoryEvaluation&)>& canonical) {
  const std::vector<int>& perm = group.permutations()[group.canonical_permutation(op)];
  canonical(SymmetryGroup::permute(op, perm), out);
  std::vector<double> rate, rate_stderr;
  unpermute(layout, perm, out.rate, rate);
  unpermute(layout, perm, out.rate_stderr, rate_stderr);
  out.rate.swap(rate);
  out.rate_stderr.swap(rate_stderr);
}

}  // namespace expectation

namespace {

constexpr NameTable<SamplingMethod, 5> kSamplingMethods{
    {{{SamplingMethod::Auto, "auto"},
      {SamplingMethod::Plain, expectation::kMethods[0].name},
      {SamplingMethod::Symmetric, expectation::kMethods[1].name},
      {SamplingMethod::Sobol, expectation::kMethods[2].name},
      {SamplingMethod::Laplace, expectation::kMethods[3].name}}},
    "--mc-method",
    "Monte Carlo method"};

}  // namespace

SamplingMethod parse_sampling_method(const std::string& name) { return kSamplingMethods.parse(name); }

const char* to_string(SamplingMethod method) { return kSamplingMethods.name(method); }

}  // namespace headspec
