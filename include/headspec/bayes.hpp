#pragma once
// The Bayes-optimal error (docs/model.md §8): ε_Bayes = 1 − E[Σ_ℓ P_ℓ²] + Δ, where
// P_ℓ = w(λ_ℓ)/Σ_ℓ' w(λ_ℓ') is the posterior of the relevant position.
#include <atomic>
#include <cstdint>

#include "headspec/parallel_mean.hpp"
#include "headspec/prior.hpp"

namespace headspec {

/// Monte Carlo over `samples` sequences (sample n from the stream (seed, Bayes, lane n)).
/// Each sample contributes 1 − Σ_ℓ P_ℓ², the error of ŷ_B averaged over the values g
/// (exact, since E_g[(Σ P_ℓ g_ℓ − g_ℓ*)²] = 1 − 2P_ℓ* + Σ P_ℓ² and E[P_ℓ*] = E[Σ P_ℓ²]).
/// Throws Interrupted once `stop` (if not null) is set.
MeanEstimate bayes_error_mc(const Prior& prior, int L, double noise, int64_t samples, uint32_t seed,
                            const std::atomic<bool>* stop = nullptr);

/// F = 1 only: the same error by quadrature, without sampling. With w the likelihood
/// ratio of λ at ℓ* to N(0, 1) and φ the standard normal density,
///   E[P_ℓ*] = ∫_0^∞ E_φ[w² e^{−u w}] (E_φ[e^{−u w}])^{L−1} du
/// (from 1/x = ∫ e^{−ux} du); u = e^v, trapezoid rules in v and in λ.
/// Throws UsageError when F ≠ 1, Interrupted once `stop` (if not null) is set.
double bayes_error_quadrature(const Prior& prior, int L, double noise, const std::atomic<bool>* stop = nullptr);

/// The size of that quadrature (its nodes in λ and terms in v; zero when F ≠ 1), for the
/// run's budget: both grow with ν, as θ_max and as θ_max² (docs/cli.md "Limits").
struct BayesQuadratureSize {
  double nodes = 0;
  double terms = 0;
};
BayesQuadratureSize bayes_quadrature_size(const Prior& prior);

}  // namespace headspec
