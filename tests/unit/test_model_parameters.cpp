// The model's plain numbers are declared once (ModelNumbers and model_number_parameters(),
// docs/testing.md "Adding a model flag"): each is a model flag, the spec carries the value
// given, its check refuses a bad value naming the flag, and the sidecar writes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "headspec/errors.hpp"
#include "headspec/parameters.hpp"
#include "headspec/settings.hpp"

using namespace headspec;

namespace {

bool is_model_flag(const std::string& name) {
  const auto& flags = model_parameters();
  return std::any_of(flags.begin(), flags.end(), [&](const auto& p) { return p.name == name; });
}

}  // namespace

TEST(ModelParameters, EveryNumberIsAFlagCarriedIntoTheSpecAndTheSidecar) {
  ASSERT_FALSE(model_number_parameters().empty());
  for (const auto& p : model_number_parameters()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(is_model_flag(p.name));
    ModelSettings settings;
    set_from_text(p.field(settings), p.name, "3");  // valid for every number (L ≥ 2, H ≥ 1, …)
    ModelSpec spec = settings.to_spec();
    nlohmann::json sidecar;
    spec.to_json(sidecar);
    EXPECT_EQ(sidecar.at(keyword_of(p.name)).get<double>(), 3.0);
    ModelNumbers& numbers = spec;
    std::visit(
        [](auto* v) {
          if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(*v)>>)
            EXPECT_EQ(static_cast<double>(*v), 3.0);
          else
            ADD_FAILURE() << "a model number that is not a number";
        },
        p.field(numbers));
  }
}

TEST(ModelParameters, EveryNumberIsCheckedNamingItsFlag) {
  for (const auto& p : model_number_parameters()) {
    SCOPED_TRACE(p.name);
    ASSERT_TRUE(static_cast<bool>(p.check));
    ModelSettings settings;
    set_from_text(p.field(settings), p.name, "-1");  // out of range for every number
    try {
      (void)settings.to_spec();
      ADD_FAILURE() << "accepted -1";
    } catch (const ParameterError& e) {
      EXPECT_EQ(e.name(), p.name);
    }
  }
}

TEST(ModelParameters, TheSpecRefusesWhatItsFlagRefuses) {
  ModelSpec spec;
  spec.H = 4097;
  try {
    spec.validate();
    ADD_FAILURE() << "accepted H = 4097";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.name(), "H");
    EXPECT_EQ(e.reason(), "at most 4096 heads, got 4097");
  }
  spec.H = 2;
  spec.readout_lr = -1;
  EXPECT_THROW(spec.validate(), ParameterError);
}
