#pragma once
// The finite-D engines by name (docs/cli.md `simulate --engine`).
#include <string>
#include <vector>

#include "headspec/simulation.hpp"

namespace headspec {

/// Names accepted by sgd_engine_factory.
std::vector<std::string> sgd_engine_names();
/// The parameters an engine's errors name (`theory` draws its initial state with --init-engine, --init-D).
struct EngineParameterNames {
  std::string engine = "engine";
  std::string D = "D";
};
/// The factory of the named engine; throws ParameterError naming the engine for an unknown
/// name or D for a D the engine cannot use.
EngineFactory sgd_engine_factory(const std::string& name, const ModelSpec& model, int64_t D);
EngineFactory sgd_engine_factory(const std::string& name, const ModelSpec& model, int64_t D,
                                 const EngineParameterNames& names);

}  // namespace headspec
