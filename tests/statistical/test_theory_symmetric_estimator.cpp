// The symmetric Monte Carlo method (docs/model.md §6, "Symmetric Monte Carlo") is an
// unbiased estimator of the right-hand side, and the standard error it reports is honest:
// checked against the plain method with 100 times the samples, and against the spread of
// its own estimates over independent seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "headspec/theory_engine.hpp"
#include "theory_states.hpp"

using namespace headspec;
using headspec::testing::model_with;
using headspec::testing::test_state;

namespace {

struct Spread {
  std::vector<double> mean, sd, mean_stderr;  // over the seeds: the estimates' mean and sd, the reported s.e.'s mean
  double error_mean = 0, error_sd = 0, error_stderr = 0;
};

Spread over_seeds(const ModelSpec& m, ValueChannel channel, SamplingMethod method, const OrderParameters& op, int64_t N,
                  int seeds) {
  std::vector<std::vector<double>> rates;
  std::vector<double> errors;
  Spread s;
  for (int k = 0; k < seeds; ++k) {
    TheoryOptions o;
    o.samples = N;
    o.method = method;
    o.channel = channel;
    o.seed = 100 + static_cast<uint32_t>(k);
    TheoryEvaluation ev;
    TheoryEngine(m, o).evaluate(op, 0, ev);
    rates.push_back(ev.rate);
    errors.push_back(ev.error);
    if (s.mean_stderr.empty()) s.mean_stderr.assign(ev.rate.size(), 0.0);
    for (std::size_t i = 0; i < ev.rate.size(); ++i) s.mean_stderr[i] += ev.rate_stderr[i] / seeds;
    s.error_stderr += ev.error_stderr / seeds;
  }
  auto mean_sd = [&](auto value, double& mean, double& sd) {
    mean = 0, sd = 0;
    for (int k = 0; k < seeds; ++k) mean += value(k) / seeds;
    for (int k = 0; k < seeds; ++k) sd += (value(k) - mean) * (value(k) - mean) / (seeds - 1);
    sd = std::sqrt(sd);
  };
  const std::size_t n = rates.front().size();
  s.mean.resize(n), s.sd.resize(n);
  for (std::size_t i = 0; i < n; ++i) mean_sd([&](int k) { return rates[k][i]; }, s.mean[i], s.sd[i]);
  mean_sd([&](int k) { return errors[k]; }, s.error_mean, s.error_sd);
  return s;
}

struct Case {
  std::string name;
  ModelSpec model;
  ValueChannel channel;
};

std::vector<Case> cases() {
  ModelSpec noisy = model_with(Activation::Softmax);
  noisy.noise = 0.2;
  noisy.batch = 2;
  return {{"softmax", model_with(Activation::Softmax), ValueChannel::Integrated},
          {"softmax keep-R noise B2", noisy, ValueChannel::Sampled},
          {"sigmoid", model_with(Activation::Sigmoid), ValueChannel::Integrated},
          {"bayes-softmax", model_with(Activation::BayesSoftmax), ValueChannel::Integrated}};
}

}  // namespace

// (The Sobol method's estimate is the mean of its 8 randomisations, its error their spread.)
// Mean over 20 seeds of N = 2000 against one plain run of 100 N: within 4 combined s.e.
TEST(TheorySymmetricEstimator, UnbiasedAgainstPlainWithHundredTimesTheSamples) {
  for (SamplingMethod method : {SamplingMethod::Symmetric, SamplingMethod::Sobol})
  for (const Case& c : cases()) {
    const OrderParameters op = test_state(c.model, c.channel == ValueChannel::Sampled);
    const int seeds = 20;
    const Spread sym = over_seeds(c.model, c.channel, method, op, 2000, seeds);
    TheoryOptions o;
    o.samples = 200000;
    o.channel = c.channel;
    o.seed = 7;
    TheoryEvaluation plain;
    TheoryEngine(c.model, o).evaluate(op, 0, plain);
    for (std::size_t i = 0; i < plain.rate.size(); ++i) {
      const double se = std::hypot(sym.sd[i] / std::sqrt(seeds), plain.rate_stderr[i]);
      if (se == 0) {
        EXPECT_EQ(sym.mean[i], plain.rate[i]) << to_string(method) << " " << c.name << " entry " << i;
        continue;
      }
      EXPECT_LT(std::abs(sym.mean[i] - plain.rate[i]), 4 * se) << to_string(method) << " " << c.name << " entry " << i;
    }
    const double se = std::hypot(sym.error_sd / std::sqrt(seeds), plain.error_stderr);
    EXPECT_LT(std::abs(sym.error_mean - plain.error), 4 * se) << to_string(method) << " " << c.name;
  }
}

// The reported standard error (from the spread of the orbit sums) against the spread of the
// estimates over 48 seeds: within a factor 1.5 (the sd of 48 values is known to ±10 %).
TEST(TheorySymmetricEstimator, ReportedStandardErrorMatchesTheSpreadOverSeeds) {
  for (SamplingMethod method : {SamplingMethod::Symmetric, SamplingMethod::Sobol})
  for (const Case& c : cases()) {
    const OrderParameters op = test_state(c.model, c.channel == ValueChannel::Sampled);
    const Spread sym = over_seeds(c.model, c.channel, method, op, 2000, 48);
    for (std::size_t i = 0; i < sym.sd.size(); ++i) {
      if (sym.sd[i] == 0) continue;  // an exact zero (dR with the value channel integrated out)
      EXPECT_GT(sym.mean_stderr[i], sym.sd[i] / 1.5) << to_string(method) << " " << c.name << " entry " << i;
      EXPECT_LT(sym.mean_stderr[i], sym.sd[i] * 1.5) << to_string(method) << " " << c.name << " entry " << i;
    }
    EXPECT_GT(sym.error_stderr, sym.error_sd / 1.5) << to_string(method) << " " << c.name;
    EXPECT_LT(sym.error_stderr, sym.error_sd * 1.5) << to_string(method) << " " << c.name;
  }
}
