#include "headspec/model.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "headspec/errors.hpp"
#include "headspec/parameters.hpp"

namespace headspec {

Eigen::VectorXd ModelSpec::initial_readout() const {
  return Eigen::VectorXd::Constant(H, readout == Readout::Sum ? 1.0 : 1.0 / H);
}

void ModelSpec::validate() const {
  check_parameters(model_number_parameters(), static_cast<const ModelNumbers&>(*this));
  // η_c is resolved (its default is η), so it is checked here rather than by its text flag.
  if (const std::string bad = non_negative()(readout_lr); !bad.empty()) throw ParameterError("readout-lr", bad);
}

void ModelSpec::to_json(nlohmann::json& j) const {
  j.update(parameter_values(model_number_parameters(), static_cast<const ModelNumbers&>(*this)));
  j["prior"] = prior.name();
  j["nu"] = std::vector<double>(prior.nu().data(), prior.nu().data() + prior.nu().size());
  j["F"] = F();
  j["activation"] = to_string(activation);
  j["readout"] = to_string(readout);
  j["readout_lr"] = readout_lr;
  lr_schedule.to_json(j);
}

}  // namespace headspec
