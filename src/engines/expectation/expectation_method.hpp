#pragma once
// An expectation method of the theory engine (docs/model.md §6): how the averages over tokens,
// keys and labels that make the right-hand side are taken. Each method is a unit of its own —
// plain_method.cpp, symmetric_method.cpp (symmetric and sobol), laplace_method.cpp — and one
// row of the registry in expectation_methods.cpp, under its --mc-method name. TheoryEngine
// checks the state, then hands it to its method.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "headspec/theory_engine.hpp"

namespace headspec {
class SymmetryGroup;
}

namespace headspec::expectation {

class ExpectationMethod {
 public:
  virtual ~ExpectationMethod() = default;
  /// The right-hand side at `op` (in the state's own head order) into `out`; `draw` selects
  /// the samples in Resample mode; `t` the schedule's time (TheoryEngine::evaluate).
  virtual void evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const = 0;
  /// The samples one evaluation averages over (0: none).
  virtual int64_t samples_used() const = 0;
  /// Samples per orbit of the symmetry group (1: no orbits).
  virtual int orbit_size() const { return 1; }
  /// Throws DivergenceError (at t) where evaluating at `op` would pass the options' bounds on
  /// one evaluation's memory and work; nothing for methods whose cost does not grow with the state.
  virtual void check_cost(const OrderParameters& op, double t) const;
  /// The covariance of one sample's rates (TheoryEngine::rate_covariance); std::logic_error for
  /// methods without independent samples.
  virtual void rate_covariance(const OrderParameters& op, Eigen::MatrixXd& cov, double t) const;
};

/// A method of the registry: how it is built, and what the run budget needs without building it.
struct MethodEntry {
  SamplingMethod method;
  const char* name;  ///< --mc-method
  std::shared_ptr<const ExpectationMethod> (*make)(const ModelSpec& model, const TheoryOptions& options);
  int64_t (*samples_used)(const ModelSpec& model, const TheoryOptions& options);
  double (*stored_bytes)(const ModelSpec& model, const TheoryOptions& options);
};

/// The entry of a method (not Auto: resolved_method first).
const MethodEntry& method_entry(SamplingMethod method);
/// Every registered method, in --mc-method order (the contract tests run over them).
std::span<const MethodEntry> registered_methods();

// The methods' builders and size functions (each in its method's file).
std::shared_ptr<const ExpectationMethod> make_plain(const ModelSpec& model, const TheoryOptions& options);
int64_t plain_samples_used(const ModelSpec& model, const TheoryOptions& options);
double plain_stored_bytes(const ModelSpec& model, const TheoryOptions& options);
std::shared_ptr<const ExpectationMethod> make_symmetric(const ModelSpec& model, const TheoryOptions& options);
int64_t symmetric_samples_used(const ModelSpec& model, const TheoryOptions& options);
double symmetric_stored_bytes(const ModelSpec& model, const TheoryOptions& options);
std::shared_ptr<const ExpectationMethod> make_laplace(const ModelSpec& model, const TheoryOptions& options);
int64_t no_samples(const ModelSpec& model, const TheoryOptions& options);
double nothing_stored(const ModelSpec& model, const TheoryOptions& options);

/// Numbers per batch entry of the plain method's samples (λ and w per position; g and ξ when
/// the value channel is sampled): the scratch every sampled method's threads draw into.
int plain_batch_width(const ModelSpec& model, ValueChannel channel);

/// Evaluates `canonical(op')` at op' = op in the canonical head order of `group` (the order the
/// symmetric and laplace methods evaluate in), and puts the rates back in op's own head order.
void evaluate_in_canonical_order(const SymmetryGroup& group, const StateLayout& layout, const OrderParameters& op,
                                 TheoryEvaluation& out,
                                 const std::function<void(const OrderParameters&, TheoryEvaluation&)>& canonical);

}  // namespace headspec::expectation
