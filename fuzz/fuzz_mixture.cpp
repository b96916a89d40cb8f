// libFuzzer target: the mixture-file parser of --prior mixture:FILE (src/prior.cpp) on
// arbitrary text. A file is either rejected with a UsageError or gives a prior that the
// engines can use: weights a probability vector, ν_f = E θ_f² finite (docs/model.md §2), and a
// finite position likelihood log w(λ) (docs/model.md §8) at λ = 0 and at a draw of θ.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/prior.hpp"
#include "headspec/random.hpp"

namespace {
void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_mixture: parsed prior violates: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  headspec::Prior prior;
  try {
    prior = headspec::Prior::mixture_stream(in, "input");
  } catch (const headspec::UsageError&) {
    return 0;
  }
  const int F = prior.F();
  require(F >= 1 && prior.atoms().cols() == F && prior.atoms().rows() == prior.weights().size(), "shapes");
  // A weight may underflow to 0 in the normalisation (1e-300 next to 1e300): that atom is
  // then never drawn and adds nothing to w(λ), which is harmless.
  require(prior.weights().allFinite() && (prior.weights().array() >= 0).all(), "weights finite and >= 0");
  require(std::abs(prior.weights().sum() - 1) < 1e-9, "weights sum to 1");
  require(prior.nu().allFinite(), "nu finite");
  require(prior.mean().allFinite(), "mean finite");
  std::vector<double> lambda(static_cast<std::size_t>(F), 0.0);
  require(std::isfinite(prior.log_likelihood(lambda.data())), "log w(0) finite");
  headspec::RandomStream rng(headspec::StreamId{1, headspec::Purpose::Train, 0, 0});
  prior.sample(rng, lambda.data());
  for (double v : lambda) require(std::isfinite(v), "draw finite");
  require(std::isfinite(prior.log_likelihood(lambda.data())), "log w(theta) finite");
  return 0;
}
