#include "headspec/bayes.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/random.hpp"

namespace headspec {

MeanEstimate bayes_error_mc(const Prior& prior, int L, double noise, int64_t samples, uint32_t seed,
                            const std::atomic<bool>* stop) {
  const int F = prior.F();
  MeanEstimate e = parallel_mean(samples, [&] {
    return [&, lambda = std::vector<double>(static_cast<std::size_t>(L * F)), theta = std::vector<double>(F),
            logw = std::vector<double>(L)](int64_t n) mutable {
      RandomStream rng(StreamId{seed, Purpose::Bayes, static_cast<uint32_t>(n), static_cast<uint64_t>(n) >> 32});
      const int lstar = static_cast<int>(rng.below(L));
      prior.sample(rng, theta.data());
      for (int l = 0; l < L; ++l)
        for (int f = 0; f < F; ++f) lambda[l * F + f] = rng.normal() + (l == lstar ? theta[f] : 0.0);
      double best = -INFINITY;
      for (int l = 0; l < L; ++l) best = std::max(best, logw[l] = prior.log_likelihood(&lambda[l * F]));
      double z = 0, z2 = 0;
      for (int l = 0; l < L; ++l) {
        const double p = std::exp(logw[l] - best);
        z += p;
        z2 += p * p;
      }
      return 1.0 - z2 / (z * z);
    };
  }, stop);
  e.mean += noise;
  return e;
}

namespace {

// The integrands φ w² e^{−uw} and φ e^{−uw} are smooth and decay like a Gaussian, so
// the trapezoid rule converges geometrically; φ w² peaks near 2θ, hence the reach.
double quadrature_reach(const Prior& prior) {
  double theta_max = std::sqrt(prior.nu()[0]);
  if (prior.atoms().size() > 0) theta_max = prior.atoms().cwiseAbs().maxCoeff();
  if (prior.kind() == PriorKind::Gauss) theta_max = 6.0 * std::sqrt(prior.nu()[0]);
  return 10.0 + 2.0 * theta_max;
}

constexpr double kNodeStep = 2e-2, kLogStep = 4e-2;

}  // namespace

BayesQuadratureSize bayes_quadrature_size(const Prior& prior) {
  BayesQuadratureSize q;
  if (prior.F() != 1) return q;
  const double reach = quadrature_reach(prior);
  q.nodes = 2 * reach / kNodeStep + 1;
  // log w over the nodes spans at most its values at the ends and the middle (w is convex
  // in λ for these priors' likelihood ratios), plus the margins of ±40 of the v grid.
  double lo = INFINITY, hi = -INFINITY;
  for (double x : {-reach, 0.0, reach}) {
    const double lw = prior.log_likelihood(&x);
    lo = std::min(lo, lw), hi = std::max(hi, lw);
  }
  q.terms = (hi - lo + 80.0) / kLogStep + 1;
  return q;
}

double bayes_error_quadrature(const Prior& prior, int L, double noise, const std::atomic<bool>* stop) {
  if (prior.F() != 1)
    throw ParameterError("method", fmt::format("quadrature needs F = 1 (one signal strength), got F = {}", prior.F()));
  const double reach = quadrature_reach(prior);
  const double hl = kNodeStep;
  // log w(λ_i) and log(φ(λ_i) h): the weights enter in log space, as φ h underflows to 0 far
  // out while e^{2 log w + v − uw} overflows there (0 · ∞ made ε NaN from ν ≈ 400 on).
  std::vector<double> logw, log_weight;
  const int nx = static_cast<int>(2 * reach / hl);
  for (int i = 0; i <= nx; ++i) {
    const double x = -reach + i * hl;
    logw.push_back(prior.log_likelihood(&x));
    log_weight.push_back(-0.5 * x * x - 0.5 * std::log(2 * M_PI) + std::log(hl));
  }
  // v = ln u: the integrand A(e^v) B(e^v)^{L−1} e^v decays at both ends.
  double lw_max = -INFINITY, lw_min = INFINITY;
  for (double v : logw) lw_max = std::max(lw_max, v), lw_min = std::min(lw_min, v);
  const double v_lo = -lw_max - 40.0, v_hi = -lw_min + 40.0, hv = kLogStep;
  const int nv = static_cast<int>((v_hi - v_lo) / hv);
  std::vector<double> terms(nv + 1);
#pragma omp parallel for schedule(static)
  for (int k = 0; k <= nv; ++k) {
    if (stop && stop->load(std::memory_order_relaxed)) continue;
    const double v = v_lo + k * hv;
    double A = 0, B = 0;
    for (std::size_t i = 0; i < logw.size(); ++i) {
      const double uw = std::exp(v + logw[i]);
      B += std::exp(log_weight[i] - uw);
      A += std::exp(log_weight[i] + 2 * logw[i] + v - uw);  // w² e^{−uw} · u (the du = u dv factor)
    }
    terms[k] = A * std::pow(B, L - 1) * hv;
  }
  if (stop && stop->load()) throw Interrupted();
  double integral = 0;
  for (double t : terms) integral += t;  // in order: thread-count independent
  return 1.0 - integral + noise;
}

}  // namespace headspec
