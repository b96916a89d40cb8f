#include <fmt/format.h>

#include "headspec/dense_engine.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/gram_engine.hpp"

namespace headspec {

std::vector<std::string> sgd_engine_names() { return {"dense", "gram"}; }

EngineFactory sgd_engine_factory(const std::string& name, const ModelSpec& model, int64_t D) {
  return sgd_engine_factory(name, model, D, EngineParameterNames{});
}

EngineFactory sgd_engine_factory(const std::string& name, const ModelSpec& model, int64_t D,
                                 const EngineParameterNames& names) {
  // The frame of u_1..u_F, v* and the H keys must fit (docs/model.md §9).
  const int64_t frame = model.F() + 1 + model.H;
  if (D < frame) throw ParameterError(names.D, fmt::format("D = {} is too small for the frame F + 1 + H = {}", D, frame));
  if (static_cast<int64_t>(model.batch) * (model.L + 1) >= (1LL << 31))
    throw ParameterError("batch", "batch × (L + 1) must stay below 2^31 (random stream lanes)");
  if (name == "dense") {
    // Tokens (L × D) and keys (H × D) are held in memory.
    if (D > 400'000'000 / (model.L + 2 * model.H))
      throw ParameterError(names.D, fmt::format("D = {} is too large for the dense engine (memory); use --{} gram", D,
                                                names.engine));
    return DenseEngine::factory(model, D);
  }
  if (name == "gram") {
    // Memory and cost independent of D; D only enters the χ² degrees of freedom, which
    // must stay exact integers in a double.
    if (D > GramEngine::kMaxD)
      throw ParameterError(names.D, fmt::format("D = {} is too large for the gram engine (at most 2^52)", D));
    return GramEngine::factory(model, D);
  }
  throw ParameterError(names.engine, fmt::format("unknown engine '{}' (available: {})", name, fmt::join(sgd_engine_names(), ", ")));
}

}  // namespace headspec
