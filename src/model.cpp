#include "headspec/model.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "headspec/errors.hpp"
#include "headspec/parameters.hpp"

namespace headspec {

Eigen::VectorXd ModelSpec::initial_readout() const {
  return Eigen::VectorXd::Constant(H, readout == Readout::Sum ? 1.0 : 1.0 / H);
}

void ModelSpec::validate() const {
  check_parameters(model_number_parameters(), static_cast<const ModelNumbers&>(*this));
  if (!(std::isfinite(readout_lr) && readout_lr >= 0))
    throw ParameterError("readout-lr", fmt::format("must be >= 0, got {}", readout_lr));
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
