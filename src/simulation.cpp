#include "headspec/simulation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "headspec/errors.hpp"
#include "headspec/settings.hpp"
#include "headspec/specialisation.hpp"

namespace headspec {

void SimulationSpec::validate() const {
  check_horizon(T, record_every);
  check_runs(seed, runs);
  if (test_samples < 1) throw ParameterError("test-samples", fmt::format("must be at least 1, got {}", test_samples));
  check_delta(stop_when_specialised, true);
}

int64_t SimulationSpec::records() const { return static_cast<int64_t>(std::floor(T / record_every + 1e-9)); }

int64_t SimulationSpec::steps_at(int64_t k, int batch) const {
  return std::llround(static_cast<double>(k) * record_every * static_cast<double>(D) / batch);
}

void SgdEngine::save_state(StateWriter&) const { throw std::logic_error("this engine cannot be checkpointed"); }
void SgdEngine::load_state(StateReader&) { throw std::logic_error("this engine cannot be checkpointed"); }

}  // namespace headspec
