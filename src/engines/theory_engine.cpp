#include "headspec/theory_engine.hpp"

#include "expectation/expectation_method.hpp"

namespace headspec {

namespace {

// The options with --mc-method auto replaced by the method it takes for this model.
TheoryOptions resolved_options(const ModelSpec& model, const TheoryOptions& given) {
  TheoryOptions options = given;
  options.method = resolved_method(model, given);
  return options;
}

}  // namespace

TheoryEngine::TheoryEngine(const ModelSpec& model, const TheoryOptions& options)
    : model_(model),
      options_(resolved_options(model, options)),
      layout_(model.H, model.F(), model.readout == Readout::Learned),
      fixed_c_(model.initial_readout()),
      method_(expectation::method_entry(options_.method).make(model_, options_)) {}

int64_t TheoryEngine::samples_used() const { return method_->samples_used(); }

int64_t TheoryEngine::samples_used(const ModelSpec& model, const TheoryOptions& given) {
  const TheoryOptions options = resolved_options(model, given);
  return expectation::method_entry(options.method).samples_used(model, options);
}

double TheoryEngine::stored_bytes(const ModelSpec& model, const TheoryOptions& given) {
  const TheoryOptions options = resolved_options(model, given);
  return expectation::method_entry(options.method).stored_bytes(model, options);
}

int TheoryEngine::orbit_size() const { return method_->orbit_size(); }

void TheoryEngine::evaluate(const OrderParameters& op, uint64_t draw, TheoryEvaluation& out, double t) const {
  check_evaluable(op, t);
  method_->evaluate(op, draw, out, t);
}

void TheoryEngine::evaluate(const double* x, uint64_t draw, TheoryEvaluation& out, double t) const {
  evaluate(layout_.unpack(x, fixed_c_), draw, out, t);
}

void TheoryEngine::rate_covariance(const OrderParameters& op, Eigen::MatrixXd& cov, double t) const {
  method_->rate_covariance(op, cov, t);
}

}  // namespace headspec
