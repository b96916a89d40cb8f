#include "headspec/model.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "headspec/errors.hpp"

namespace headspec {

Eigen::VectorXd ModelSpec::initial_readout() const {
  return Eigen::VectorXd::Constant(H, readout == Readout::Sum ? 1.0 : 1.0 / H);
}

void ModelSpec::validate() const {
  auto finite_nonneg = [](double x) { return std::isfinite(x) && x >= 0; };
  if (H < 1) throw ParameterError("H", fmt::format("needs at least one head, got {}", H));
  if (H > 4096) throw ParameterError("H", fmt::format("at most 4096 heads, got {}", H));
  if (L < 2) throw ParameterError("L", fmt::format("sequence length must be at least 2, got {}", L));
  if (L > 4096) throw ParameterError("L", fmt::format("sequence length at most 4096, got {}", L));
  if (!(std::isfinite(lr) && lr > 0)) throw ParameterError("lr", fmt::format("learning rate must be > 0, got {}", lr));
  if (!finite_nonneg(readout_lr)) throw ParameterError("readout-lr", fmt::format("must be >= 0, got {}", readout_lr));
  if (batch < 1) throw ParameterError("batch", fmt::format("must be at least 1, got {}", batch));
  if (!finite_nonneg(noise)) throw ParameterError("noise", fmt::format("label noise must be >= 0, got {}", noise));
  if (!(std::isfinite(q0) && q0 > 0)) throw ParameterError("q0", fmt::format("initial key variance must be > 0, got {}", q0));
}

void ModelSpec::to_json(nlohmann::json& j) const {
  j["prior"] = prior.name();
  j["nu"] = std::vector<double>(prior.nu().data(), prior.nu().data() + prior.nu().size());
  j["F"] = F();
  j["activation"] = to_string(activation);
  j["readout"] = to_string(readout);
  j["readout_lr"] = readout_lr;
  j["L"] = L;
  j["H"] = H;
  j["lr"] = lr;
  lr_schedule.to_json(j);
  j["batch"] = batch;
  j["noise"] = noise;
  j["q0"] = q0;
}

}  // namespace headspec
