#include "laplace_expression.hpp"

#include <algorithm>

namespace headspec::laplace {

Monomial Monomial::operator*(const Monomial& other) const {
  Monomial m;
  for (int h = 0; h < kMaxHeads; ++h) {
    m.exp_score[h] = static_cast<int8_t>(exp_score[h] + other.exp_score[h]);
    m.score[h] = static_cast<int8_t>(score[h] + other.score[h]);
  }
  for (int f = 0; f < kMaxDirections; ++f) m.lambda[f] = static_cast<int8_t>(lambda[f] + other.lambda[f]);
  m.relevant_only = relevant_only || other.relevant_only;
  return m;
}

namespace {

void accumulate(Expression& out, Term term, double coefficient) {
  std::sort(term.sums.begin(), term.sums.end());
  const auto [it, inserted] = out.emplace(std::move(term), coefficient);
  if (!inserted) it->second += coefficient;
}

Term product(const Term& a, const Term& b) {
  Term t;
  for (int h = 0; h < kMaxHeads; ++h) {
    t.inverse_normaliser[h] = static_cast<int8_t>(a.inverse_normaliser[h] + b.inverse_normaliser[h]);
    t.readout[h] = static_cast<int8_t>(a.readout[h] + b.readout[h]);
  }
  t.sums = a.sums;
  t.sums.insert(t.sums.end(), b.sums.begin(), b.sums.end());
  if (a.position && b.position)
    t.position = *a.position * *b.position;
  else
    t.position = a.position ? a.position : b.position;
  return t;
}

Expression single(const Term& t, double coefficient = 1.0) { return Expression{{t, coefficient}}; }

Expression position_factor(const Monomial& m, int normalised_head = -1) {
  Term t;
  t.position = m;
  if (normalised_head >= 0) t.inverse_normaliser[normalised_head] = 1;
  return single(t);
}

}  // namespace

Expression operator+(const Expression& a, const Expression& b) {
  Expression out = a;
  for (const auto& [t, k] : b) accumulate(out, t, k);
  return out;
}

Expression operator*(const Expression& a, const Expression& b) {
  Expression out;
  for (const auto& [ta, ka] : a)
    for (const auto& [tb, kb] : b) accumulate(out, product(ta, tb), ka * kb);
  return out;
}

Expression operator*(double k, const Expression& a) {
  Expression out = a;
  for (auto& entry : out) entry.second *= k;
  return out;
}

Expression sum_over_positions(const Expression& a) {
  Expression out;
  for (const auto& [t, k] : a) {
    Term summed = t;
    summed.sums.push_back(*t.position);
    summed.position.reset();
    accumulate(out, std::move(summed), k);
  }
  return out;
}

Expression attention(int h) {
  Monomial m;
  m.exp_score[h] = 1;
  return position_factor(m, h);
}

Expression score(int h) {
  Monomial m;
  m.score[h] = 1;
  return position_factor(m);
}

Expression latent(int f) {
  Monomial m;
  m.lambda[f] = 1;
  return position_factor(m);
}

Expression relevant() {
  Monomial m;
  m.relevant_only = true;
  return position_factor(m);
}

Expression readout(int h) {
  Term t;
  t.readout[h] = 1;
  return single(t);
}

RateIntegrands rate_integrands(int H, int F) {
  RateIntegrands out;
  Expression residual = -1.0 * relevant();  // e_ℓ = Σ_h c_h A_hℓ − 1[ℓ = ℓ*]
  for (int h = 0; h < H; ++h) residual = residual + readout(h) * attention(h);
  std::vector<Expression> P;
  for (int h = 0; h < H; ++h) {
    out.readout_drift.push_back(sum_over_positions(attention(h) * residual));
    P.push_back(readout(h) * attention(h) * (residual + -1.0 * out.readout_drift[h]));
  }
  out.squared_residual = sum_over_positions(residual * residual);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) out.key_drift.push_back(sum_over_positions(P[h] * latent(f)));
  for (int h = 0; h < H; ++h)
    for (int g = h; g < H; ++g) {
      const Expression ab = attention(h) * attention(g);
      const Expression sab = sum_over_positions(ab);
      // Σ_ℓ Φ_hℓ·Φ_gℓ = c_h c_g (Σ ab − Σ ab(a + b) + (Σ ab)²), a = A_hℓ, b = A_gℓ (docs/theory.md §1).
      const Expression gram = readout(h) * readout(g) *
                              (sab + -1.0 * sum_over_positions(ab * (attention(h) + attention(g))) + sab * sab);
      out.overlap_drift.push_back(sum_over_positions(P[h] * score(g) + P[g] * score(h)));
      out.jacobian_gram.push_back(gram);
      out.residual_gram.push_back(out.squared_residual * gram + 2.0 * sum_over_positions(P[h] * P[g]));
    }
  return out;
}

}  // namespace headspec::laplace
