// The contract every registered expectation method keeps (src/engines/expectation/,
// docs/testing.md "Variants"): its name parses to it; the registry's sizes are the engine's;
// the same bits whatever the thread count; and its rates and ε agree with an independent
// computation, plain Monte Carlo of 4·10^5 samples, within 5 combined standard errors (a
// correct method fails one of its 10 comparisons — 8 rates, R's being 0, and ε — with
// probability below 10^-5; the seeds are fixed, so a failure is reproducible).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>

#include "../../src/engines/expectation/expectation_method.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_states.hpp"

using namespace headspec;
using headspec::expectation::MethodEntry;
using headspec::expectation::registered_methods;

namespace {

// Softmax, flip ν = (2, 2), L = 4, H = 2, learned readout: a model every method covers.
ModelSpec contract_model() {
  ModelSpec m;
  m.L = 4;
  return m;
}

TheoryOptions options_of(SamplingMethod method, int64_t samples, uint32_t seed) {
  TheoryOptions o;
  o.method = method;
  o.samples = samples;
  o.seed = seed;
  return o;
}

TheoryEvaluation evaluate_with_threads(const TheoryEngine& engine, const OrderParameters& op, int threads) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  TheoryEvaluation out;
  engine.evaluate(op, 0, out);
  omp_set_num_threads(before);
  return out;
}

std::string name_of(const ::testing::TestParamInfo<MethodEntry>& info) { return info.param.name; }

class ExpectationMethodContract : public ::testing::TestWithParam<MethodEntry> {};

}  // namespace

TEST(ExpectationMethods, EveryMethodButAutoIsRegisteredOnce) {
  for (SamplingMethod m : {SamplingMethod::Plain, SamplingMethod::Symmetric, SamplingMethod::Sobol,
                           SamplingMethod::Laplace}) {
    int found = 0;
    for (const MethodEntry& e : registered_methods()) found += e.method == m;
    EXPECT_EQ(found, 1) << to_string(m);
  }
  EXPECT_THROW(expectation::method_entry(SamplingMethod::Auto), std::logic_error);
}

TEST_P(ExpectationMethodContract, NameParsesToIt) {
  EXPECT_EQ(parse_sampling_method(GetParam().name), GetParam().method);
  EXPECT_EQ(std::string(to_string(GetParam().method)), GetParam().name);
}

TEST_P(ExpectationMethodContract, RegistrySizesAreTheEngines) {
  const ModelSpec m = contract_model();
  const TheoryOptions o = options_of(GetParam().method, 3000, 4);
  const TheoryEngine engine(m, o);
  EXPECT_EQ(GetParam().samples_used(m, o), engine.samples_used());
  EXPECT_EQ(TheoryEngine::samples_used(m, o), engine.samples_used());
  EXPECT_GE(GetParam().stored_bytes(m, o), 0.0);
}

TEST_P(ExpectationMethodContract, SameBitsWhateverTheThreadCount) {
  const ModelSpec m = contract_model();
  const TheoryEngine engine(m, options_of(GetParam().method, 40000, 4));  // past kParallelBlocks
  const OrderParameters op = headspec::testing::generic_state(m, false);
  const TheoryEvaluation one = evaluate_with_threads(engine, op, 1), two = evaluate_with_threads(engine, op, 2);
  EXPECT_EQ(one.rate, two.rate);
  EXPECT_EQ(one.rate_stderr, two.rate_stderr);
  EXPECT_EQ(one.error, two.error);
}

TEST_P(ExpectationMethodContract, AgreesWithPlainMonteCarlo) {
  const ModelSpec m = contract_model();
  const OrderParameters op = headspec::testing::generic_state(m, false);
  TheoryEvaluation got, reference;
  TheoryEngine(m, options_of(GetParam().method, 20000, 4)).evaluate(op, 0, got);
  TheoryEngine(m, options_of(SamplingMethod::Plain, 400000, 99)).evaluate(op, 0, reference);
  ASSERT_EQ(got.rate.size(), reference.rate.size());
  for (std::size_t i = 0; i < got.rate.size(); ++i) {
    const double se = std::hypot(got.rate_stderr[i], reference.rate_stderr[i]);
    if (se == 0) continue;  // R's rates with the value channel integrated out: 0 in both
    EXPECT_NEAR(got.rate[i], reference.rate[i], 5 * se) << "rate " << i;
  }
  EXPECT_NEAR(got.error, reference.error, 5 * std::hypot(got.error_stderr, reference.error_stderr));
}

INSTANTIATE_TEST_SUITE_P(Registered, ExpectationMethodContract, ::testing::ValuesIn(registered_methods().begin(),
                                                                                    registered_methods().end()),
                         name_of);
