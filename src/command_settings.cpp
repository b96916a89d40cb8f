// The settings of the subcommands turned into the library's specs (docs/cli.md).
#include "headspec/command_settings.hpp"

#include <fmt/format.h>

#include "headspec/errors.hpp"
#include "headspec/study_checks.hpp"

namespace headspec {

SimulationSpec SimulateSettings::simulation() const {
  check_horizon(T, record_every);
  SimulationSpec sim;
  sim.D = D;
  sim.T = T;
  sim.record_every = record_every;
  sim.test_samples = test_samples;
  sim.seed = checked_seed(seed);
  sim.runs = runs;
  check_parameters(simulate_parameters(), *this);
  sim.stop_when_specialised = stop_when_specialised ? delta : 0;
  sim.validate();
  return sim;
}

TheoryRunsSpec TheorySettings::runs_spec() const {
  check_horizon(T, record_every);
  TheoryRunsSpec spec;
  static_cast<TheoryFlags&>(spec) = *this;  // checked by TheoryConfig
  if (mc_error && (!checkpoint.empty() || !resume.empty()))
    throw ParameterError("mc-error", "not with --checkpoint or --resume (the randomisations' runs are not kept)");
  spec.mc_error = mc_error;
  spec.T = T;
  spec.record_every = record_every;
  spec.runs = runs;
  spec.seed = checked_seed(seed);
  spec.sde = sde;
  spec.init_seed = checked_init_seed(init_seed);
  spec.stop_when_specialised = stop_when_specialised;
  spec.delta = delta;
  return spec;
}

void BayesSettings::check() const {
  if (samples < 2) throw ParameterError("samples", fmt::format("need at least 2, got {}", samples));
  checked_seed(seed);
  if (method != "mc" && method != "quadrature")
    throw ParameterError("method", fmt::format("unknown method '{}' (mc, quadrature)", method));
}

MnistSettings::MnistSettings() : data(std::string(HEADSPEC_SOURCE_DIR) + "/data/mnist") {
  H = 10;
  L = 5;
  nu = "1000";
  T = 100;
}

MnistStudySpec MnistSettings::study(ModelSpec& model) const {
  const auto values = parse_numbers(nu, "nu");
  if (values.size() != 1)
    throw ParameterError("nu", fmt::format("the MNIST task takes one signal strength ν, got {} values", values.size()));
  model = to_spec();
  check_horizon(T, record_every);
  check_runs(checked_seed(seed), runs);
  check_mnist_flags(model, test_samples, split_seed, train_fraction, delta);
  MnistStudySpec spec;
  spec.nu = values[0];
  spec.delta = delta;
  spec.sim.D = MnistEngine::D;
  spec.sim.T = T;
  spec.sim.record_every = record_every;
  spec.sim.test_samples = test_samples;
  spec.sim.seed = static_cast<uint32_t>(seed);
  spec.sim.runs = runs;
  return spec;
}

}  // namespace headspec
