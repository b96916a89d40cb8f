// fill_normal and fill_uniform (include/headspec/random.hpp).
// References: the values fill_normal gave before it was vectorised; the moments of
// N(0,1) and U(0,1); the Kolmogorov distribution and the chi-square law. Statistical
// bounds are 5 standard errors, or the 0.999 quantile of the test statistic: a correct
// generator fails one of them with probability below 10^-3 per check, and the seeds are
// fixed, so a failure is reproducible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "headspec/random.hpp"
#include "random_helpers.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

double mean_of(const std::vector<double>& x, double (*f)(double)) {
  double s = 0;
  for (double v : x) s += f(v);
  return s / static_cast<double>(x.size());
}

// Sample mean of f(x) and its standard error from the known variance of f under the law.
void expect_moment(const std::vector<double>& x, double (*f)(double), double expected, double variance,
                   const char* what) {
  const double se = std::sqrt(variance / static_cast<double>(x.size()));
  EXPECT_NEAR(mean_of(x, f), expected, 5 * se) << what;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

// Values of fill_uniform before Philox was vectorised (the scalar Random123
// implementation), and of fill_normal since the ziggurat: the same numbers per seed, exact
// (the same bits on the scalar, AVX2 and AVX-512F paths, and in x86-64 and x86-64-v3
// builds). na_big[385742] comes from the ziggurat's tail (|x| > r = 4.0388…), i.e. from the
// slow path and the value's secondary Philox blocks.
TEST(RandomFill, SameNumbersAsScalarImplementation) {
  const StreamId a{1, Purpose::Train, 0, 0}, b{7, Purpose::KeyInit, 3, 123456789012ULL};
  const auto na = normals(a, 1000, 1000), nb = normals(b, 1000, 1000);
  EXPECT_EQ(na[0], -0.015720652115513958);
  EXPECT_EQ(na[1], 0.74183553806575375);
  EXPECT_EQ(na[63], -1.707257896989099);
  EXPECT_EQ(na[64], 0.22359748983186589);
  EXPECT_EQ(na[127], -1.0820720826958363);
  EXPECT_EQ(na[128], 0.31266388454726401);
  EXPECT_EQ(na[999], -1.0480201247240155);
  EXPECT_EQ(nb[0], -1.0018647209227727);
  EXPECT_EQ(nb[128], -0.54880202634558339);
  EXPECT_EQ(nb[255], -0.35427770579862394);
  EXPECT_EQ(normals(a, 385742, 1)[0], 4.7064583477722479);
  const auto ua = uniforms(a, 1000, 1000), ub = uniforms(b, 1000, 1000);
  EXPECT_EQ(ua[0], 0.71428999377569036);
  EXPECT_EQ(ua[1], 0.71787341552515782);
  EXPECT_EQ(ua[999], 0.69135612684661019);
  EXPECT_EQ(ub[0], 0.62280742200170569);
  EXPECT_EQ(ub[999], 0.93301902015535165);
}

// Each value is a pure function of (StreamId, index): any split of [first, first + n) into
// pieces (odd offsets, lengths crossing the 128-normal groups), filled in any order or
// from any thread, gives the same bits as one fill.
TEST(RandomFill, PiecewiseEqualsWhole) {
  const StreamId id{11, Purpose::Train, 5, (uint64_t{3} << 32) + 17};
  std::mt19937 gen(5);
  for (uint64_t first : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{1001}, uint64_t{1} << 33}) {
    const std::size_t n = 3000;
    const auto whole_n = normals(id, first, n), whole_u = uniforms(id, first, n);
    std::vector<double> pn(n), pu(n);
    for (std::size_t at = 0; at < n;) {
      const std::size_t len = std::min<std::size_t>(n - at, 1 + gen() % 300);
      fill_normal(id, first + at, pn.data() + at, len);
      fill_uniform(id, first + at, pu.data() + at, len);
      at += len;
    }
    EXPECT_TRUE(same_bits(whole_n, pn)) << "normals from " << first;
    EXPECT_TRUE(same_bits(whole_u, pu)) << "uniforms from " << first;
    // One value at a time, backwards.
    std::vector<double> one(n);
    for (std::size_t i = n; i-- > 0;) fill_normal(id, first + i, one.data() + i, 1);
    EXPECT_TRUE(same_bits(whole_n, one)) << "single normals from " << first;
    // Pieces of 37 spread over threads.
    std::vector<double> threaded(n);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t at = 0; at < static_cast<int64_t>(n); at += 37)
      fill_normal(id, first + static_cast<uint64_t>(at), threaded.data() + at,
                  std::min<std::size_t>(37, n - static_cast<std::size_t>(at)));
    EXPECT_TRUE(same_bits(whole_n, threaded)) << "threaded normals from " << first;
  }
}

// Frequencies of the tails against the exact Gaussian probabilities P(a < |x| ≤ b), within
// 5 binomial standard errors, on 2·10^7 normals: the ziggurat's wedges (|x| up to r) and its
// tail (beyond r = 4.0388…, drawn by the slow path) have the right mass.
TEST(RandomFill, NormalTailFrequencies) {
  const std::size_t n = 20'000'000;
  const auto x = normals(StreamId{6, Purpose::MonteCarlo, 0, 0}, 0, n);
  const double edges[] = {2.0, 3.0, 3.5, 4.0, 4.0388, 4.5, 5.0, INFINITY};
  const int bins = static_cast<int>(std::size(edges)) - 1;
  std::vector<double> count(bins, 0.0);
  double above3 = 0, above45 = 0;
  for (double v : x) {
    const double a = std::fabs(v);
    above3 += a > 3.0;
    above45 += a > 4.5;
    for (int k = 0; k < bins; ++k)
      if (a > edges[k] && a <= edges[k + 1]) count[k] += 1;
  }
  const auto expect_frequency = [&](double c, double p, const char* what, double lo, double hi) {
    const double se = std::sqrt(static_cast<double>(n) * p * (1 - p));
    EXPECT_NEAR(c, static_cast<double>(n) * p, 5 * se) << what << " (" << lo << ", " << hi << "]";
  };
  const auto two_sided = [](double t) { return std::erfc(t / std::sqrt(2.0)); };  // P(|x| > t)
  expect_frequency(above3, two_sided(3.0), "|x| > 3", 3.0, INFINITY);
  expect_frequency(above45, two_sided(4.5), "|x| > 4.5", 4.5, INFINITY);
  for (int k = 0; k < bins; ++k)
    expect_frequency(count[k], two_sided(edges[k]) - two_sided(edges[k + 1]), "bin", edges[k], edges[k + 1]);
  // Both signs in the tail beyond r.
  double neg = 0, tail = 0;
  for (double v : x)
    if (std::fabs(v) > 4.0388) {
      tail += 1;
      neg += v < 0;
    }
  EXPECT_NEAR(neg, tail / 2, 5 * std::sqrt(tail / 4));
}

// E x = 0, E x² = 1, E x³ = 0, E x⁴ = 3, with variances 1, 2, 15, 96 (E x^2k = (2k−1)!!).
TEST(RandomFill, NormalMoments) {
  const auto x = normals(StreamId{3, Purpose::MonteCarlo, 0, 0}, 0, 4'000'000);
  expect_moment(x, [](double v) { return v; }, 0.0, 1.0, "mean");
  expect_moment(x, [](double v) { return v * v; }, 1.0, 2.0, "second moment");
  expect_moment(x, [](double v) { return v * v * v; }, 0.0, 15.0, "third moment");
  expect_moment(x, [](double v) { return v * v * v * v; }, 3.0, 96.0, "fourth moment");
  for (double v : x) ASSERT_TRUE(std::isfinite(v));
}

// E u^k = 1/(k+1): mean 1/2 (variance 1/12), E u² = 1/3 (variance 1/5 − 1/9 = 4/45).
TEST(RandomFill, UniformMomentsAndOpenInterval) {
  const auto u = uniforms(StreamId{3, Purpose::MonteCarlo, 1, 0}, 0, 4'000'000);
  expect_moment(u, [](double v) { return v; }, 0.5, 1.0 / 12, "mean");
  expect_moment(u, [](double v) { return v * v; }, 1.0 / 3, 4.0 / 45, "second moment");
  EXPECT_GT(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
}

// Kolmogorov–Smirnov against Φ at level 10^-3: √n D_n < 1.9495, the 0.999 quantile of the
// Kolmogorov distribution (asymptotic; n = 10^6).
TEST(RandomFill, NormalKolmogorovSmirnov) {
  auto x = normals(StreamId{4, Purpose::MonteCarlo, 2, 9}, 0, 1'000'000);
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = normal_cdf(x[i]);
    d = std::max({d, (static_cast<double>(i) + 1) / n - f, f - static_cast<double>(i) / n});
  }
  EXPECT_LT(std::sqrt(n) * d, 1.9495);
}

// Chi-square of Φ(x) over 200 equiprobable bins (the tails included: the outer bins hold
// |x| > 2.8) at level 10^-3, and over 2000 bins on 10^7 normals (bins 0.0013 wide near
// the centre, narrower than any of the ziggurat's layers).
TEST(RandomFill, NormalChiSquareOfCdf) {
  for (const auto& [n, bins] : {std::pair<std::size_t, int>{2'000'000, 200}, {10'000'000, 2000}}) {
    const auto x = normals(StreamId{5, Purpose::MonteCarlo, 0, 0}, 0, n);
    std::vector<double> count(bins, 0.0);
    for (double v : x) count[std::min(bins - 1, static_cast<int>(normal_cdf(v) * bins))] += 1;
    const double expected = static_cast<double>(x.size()) / bins;
    double chi2 = 0;
    for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
    EXPECT_LT(chi2, chi2_quantile(bins - 1, kZ999)) << bins << " bins";
  }
}

// Streams that differ in any one field of StreamId, and neighbouring values of one stream,
// are uncorrelated: |r| < 5/√n (the standard error of r for independent samples).
TEST(RandomFill, DistinctStreamsAreUncorrelated) {
  const std::size_t n = 1'000'000;
  const StreamId base{8, Purpose::Train, 4, 10};
  const auto x = normals(base, 0, n);
  std::vector<StreamId> others;
  for (int field = 0; field < 5; ++field) {
    StreamId o = base;
    if (field == 0) o.seed = 9;
    if (field == 1) o.purpose = Purpose::Test;
    if (field == 2) o.lane = 5;
    if (field == 3) o.step = 11;
    if (field == 4) o.step = 10 + (uint64_t{1} << 32);  // the step's high word
    others.push_back(o);
  }
  const double bound = 5 / std::sqrt(static_cast<double>(n));
  for (const auto& o : others) EXPECT_LT(std::abs(correlation(x, normals(o, 0, n))), bound);
  EXPECT_LT(std::abs(correlation(x, normals(base, n, n))), bound);  // the same stream, further on
  const std::vector<double> head(x.begin(), x.end() - 1), tail(x.begin() + 1, x.end());
  EXPECT_LT(std::abs(correlation(head, tail)), bound);  // lag 1: neighbouring blocks
  const std::vector<double> head64(x.begin(), x.end() - 64), tail64(x.begin() + 64, x.end());
  EXPECT_LT(std::abs(correlation(head64, tail64)), bound);  // lag 64: the two words of a block
  std::vector<double> sq(n);  // and of their squares (|x| of the two words of a block)
  for (std::size_t i = 0; i < n; ++i) sq[i] = x[i] * x[i];
  const std::vector<double> sq_head(sq.begin(), sq.end() - 64), sq_tail(sq.begin() + 64, sq.end());
  EXPECT_LT(std::abs(correlation(sq_head, sq_tail)), bound);
  EXPECT_DOUBLE_EQ(correlation(x, normals(base, 0, n)), 1.0);  // the test can see a correlation
}
