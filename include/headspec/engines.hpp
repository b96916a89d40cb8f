#pragma once
// The finite-D engines by name (docs/cli.md `simulate --engine`).
#include <string>
#include <vector>

#include "headspec/simulation.hpp"

namespace headspec {

/// Names accepted by sgd_engine_factory.
std::vector<std::string> sgd_engine_names();
/// The factory of the named engine; throws UsageError naming --engine for an unknown name
/// or a D the engine cannot use.
EngineFactory sgd_engine_factory(const std::string& name, const ModelSpec& model, int64_t D);

}  // namespace headspec
