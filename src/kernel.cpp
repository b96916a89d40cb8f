#include "headspec/kernel.hpp"

#include <algorithm>
#include <cmath>

#include "exp_lanes.hpp"

namespace headspec {

AttentionKernel::AttentionKernel(Activation activation, int H, int L)
    : activation_(activation), H_(H), L_(L), A_(H, L), a_(L), o_(H), c_(H) {}

void AttentionKernel::forward(const RowMatrix& S, const Eigen::VectorXd& g, const Eigen::VectorXd& c) {
  c_ = c;
  switch (activation_) {
    case Activation::Softmax:
    case Activation::Softmax1:
      for (int h = 0; h < H_; ++h) {
        // softmax-1 has an extra logit 0 in its normalisation (MODEL.md §3).
        double m = activation_ == Activation::Softmax1 ? 0.0 : -INFINITY;
        for (int l = 0; l < L_; ++l) m = std::max(m, S(h, l));
        double z = activation_ == Activation::Softmax1 ? std::exp(-m) : 0.0;
        for (int l = 0; l < L_; ++l) z += (A_(h, l) = std::exp(S(h, l) - m));
        A_.row(h) /= z;
      }
      break;
    case Activation::BayesSoftmax: {
      const double m = S.maxCoeff();
      A_ = (S.array() - m).exp();
      A_ /= A_.sum();
      break;
    }
    case Activation::Linear:
      A_ = S;
      break;
  }
  o_.noalias() = A_ * g;
  a_.noalias() = A_.transpose() * c;
  yhat_ = c.dot(o_);
}

void AttentionKernel::apply_jacobian(const Eigen::VectorXd& v, RowMatrix& out) const {
  out.resize(H_, L_);
  switch (activation_) {
    case Activation::Softmax:
    case Activation::Softmax1:  // Φ_hℓ,ℓ' = c_h A_hℓ (δ_ℓℓ' − A_hℓ')
      for (int h = 0; h < H_; ++h) {
        const double mean = A_.row(h).dot(v);
        for (int l = 0; l < L_; ++l) out(h, l) = c_[h] * A_(h, l) * (v[l] - mean);
      }
      break;
    case Activation::BayesSoftmax: {  // Φ_hℓ,ℓ' = A_hℓ (c_h δ_ℓℓ' − a_ℓ')
      const double mean = a_.dot(v);
      for (int h = 0; h < H_; ++h)
        for (int l = 0; l < L_; ++l) out(h, l) = A_(h, l) * (c_[h] * v[l] - mean);
      break;
    }
    case Activation::Linear:  // Φ_hℓ,ℓ' = c_h δ_ℓℓ'
      for (int h = 0; h < H_; ++h)
        for (int l = 0; l < L_; ++l) out(h, l) = c_[h] * v[l];
      break;
  }
}

double AttentionKernel::phi(int h, int l, int lp) const {
  const double delta = l == lp ? 1.0 : 0.0;
  switch (activation_) {
    case Activation::Softmax:
    case Activation::Softmax1:
      return c_[h] * A_(h, l) * (delta - A_(h, lp));
    case Activation::BayesSoftmax:
      return A_(h, l) * (c_[h] * delta - a_[lp]);
    case Activation::Linear:
      return c_[h] * delta;
  }
  return 0;
}

void AttentionKernel::jacobian_gram(Eigen::MatrixXd& out) const {
  out.resize(H_, H_);
  for (int h = 0; h < H_; ++h)
    for (int g = h; g < H_; ++g) {
      double sum = 0;
      switch (activation_) {
        case Activation::Softmax:
        case Activation::Softmax1: {
          // Φ_h = c_h (diag A_h − A_h A_hᵀ): Σ (D_a − a aᵀ)∘(D_b − b bᵀ) = Σ a b (1 − a − b) + (a·b)².
          double ab = 0, cross = 0;
          for (int l = 0; l < L_; ++l) {
            const double a = A_(h, l), b = A_(g, l);
            ab += a * b;
            cross += a * b * (1.0 - a - b);
          }
          sum = c_[h] * c_[g] * (cross + ab * ab);
          break;
        }
        case Activation::BayesSoftmax: {
          // Φ_hℓ,ℓ' = A_hℓ (c_h δ_ℓℓ' − a_ℓ'): Σ_ℓ A_hℓ A_gℓ (c_h c_g − (c_h + c_g) a_ℓ + |a|²).
          const double a2 = a_.squaredNorm();
          for (int l = 0; l < L_; ++l)
            sum += A_(h, l) * A_(g, l) * (c_[h] * c_[g] - (c_[h] + c_[g]) * a_[l] + a2);
          break;
        }
        case Activation::Linear:  // Φ_hℓ,ℓ' = c_h δ_ℓℓ'
          sum = c_[h] * c_[g] * L_;
          break;
      }
      out(h, g) = out(g, h) = sum;
    }
}

}  // namespace headspec

namespace headspec {

using Lanes = AttentionKernelBatch::Lanes;

namespace {

// The polynomial exponential of exp_lanes.hpp, on the kernel's lanes.
[[gnu::always_inline]] inline Lanes exp_nonpositive_lanes(const Lanes& x) {
  return detail::exp_nonpositive<AttentionKernelBatch::kLanes>(x);
}

}  // namespace

Lanes AttentionKernelBatch::exp_nonpositive(const Lanes& x) { return exp_nonpositive_lanes(x); }

AttentionKernelBatch::AttentionKernelBatch(Activation activation, int H, int L)
    : activation_(activation),
      H_(H),
      L_(L),
      A_(H * L, Lanes::Zero()),
      a_(L, Lanes::Zero()),
      o_(H, Lanes::Zero()),
      row_max_(H, Lanes::Zero()),
      yhat_(Lanes::Zero()),
      c_(Eigen::VectorXd::Zero(H)) {}

void AttentionKernelBatch::forward(const Lanes* S, const Lanes* g, const Eigen::VectorXd& c) {
  c_ = c;
  const int HL = H_ * L_;
  switch (activation_) {
    case Activation::Softmax:
    case Activation::Softmax1: {
      // As AttentionKernel::forward, lane by lane: shift by the row maximum (softmax-1's
      // extra logit 0 included, MODEL.md §3), exponentiate, normalise.
      const bool one = activation_ == Activation::Softmax1;
      for (int h = 0; h < H_; ++h) {
        const Lanes* s = S + h * L_;
        Lanes* Ah = A_.data() + h * L_;
        Lanes m = Lanes::Constant(one ? 0.0 : -INFINITY);
        for (int l = 0; l < L_; ++l) m = m.max(s[l]);
        Lanes z = one ? exp_nonpositive_lanes(-m) : Lanes(Lanes::Zero());
        for (int l = 0; l < L_; ++l) z += (Ah[l] = exp_nonpositive_lanes(s[l] - m));
        const Lanes inv = z.inverse();  // one division per row, not per entry
        for (int l = 0; l < L_; ++l) Ah[l] *= inv;
      }
      break;
    }
    case Activation::BayesSoftmax: {
      Lanes m = Lanes::Constant(-INFINITY), z = Lanes::Zero();
      for (int i = 0; i < HL; ++i) m = m.max(S[i]);
      for (int i = 0; i < HL; ++i) z += (A_[i] = exp_nonpositive_lanes(S[i] - m));
      const Lanes inv = z.inverse();
      for (int i = 0; i < HL; ++i) A_[i] *= inv;
      break;
    }
    case Activation::Linear:
      std::copy(S, S + HL, A_.begin());
      break;
  }
  for (int l = 0; l < L_; ++l) {
    Lanes sum = c_[0] * A_[l];
    for (int h = 1; h < H_; ++h) sum += c_[h] * A_[h * L_ + l];
    a_[l] = sum;
  }
  if (g == nullptr) return;
  yhat_.setZero();
  for (int h = 0; h < H_; ++h) {
    Lanes o = Lanes::Zero();
    for (int l = 0; l < L_; ++l) o += A_[h * L_ + l] * g[l];
    o_[h] = o;
    yhat_ += c_[h] * o;
  }
}

void AttentionKernelBatch::apply_jacobian(const Lanes* v, Lanes* out) const {
  switch (activation_) {
    case Activation::Softmax:
    case Activation::Softmax1:  // Φ_hℓ,ℓ' = c_h A_hℓ (δ_ℓℓ' − A_hℓ')
      for (int h = 0; h < H_; ++h) {
        const Lanes* Ah = A_.data() + h * L_;
        Lanes mean = Lanes::Zero();
        for (int l = 0; l < L_; ++l) mean += Ah[l] * v[l];
        for (int l = 0; l < L_; ++l) out[h * L_ + l] = c_[h] * Ah[l] * (v[l] - mean);
      }
      break;
    case Activation::BayesSoftmax: {  // Φ_hℓ,ℓ' = A_hℓ (c_h δ_ℓℓ' − a_ℓ')
      Lanes mean = Lanes::Zero();
      for (int l = 0; l < L_; ++l) mean += a_[l] * v[l];
      for (int h = 0; h < H_; ++h)
        for (int l = 0; l < L_; ++l) out[h * L_ + l] = A_[h * L_ + l] * (c_[h] * v[l] - mean);
      break;
    }
    case Activation::Linear:  // Φ_hℓ,ℓ' = c_h δ_ℓℓ'
      for (int h = 0; h < H_; ++h)
        for (int l = 0; l < L_; ++l) out[h * L_ + l] = c_[h] * v[l];
      break;
  }
}

void AttentionKernelBatch::jacobian_gram(Lanes* out) const {
  Lanes a2 = Lanes::Zero();
  if (activation_ == Activation::BayesSoftmax)
    for (int l = 0; l < L_; ++l) a2 += a_[l].square();
  int q = 0;
  for (int h = 0; h < H_; ++h)
    for (int g = h; g < H_; ++g, ++q) {
      const Lanes* Ah = A_.data() + h * L_;
      const Lanes* Ag = A_.data() + g * L_;
      const double chg = c_[h] * c_[g];
      switch (activation_) {
        case Activation::Softmax:
        case Activation::Softmax1: {
          // Σ (D_a − a aᵀ)∘(D_b − b bᵀ) = Σ a b (1 − a − b) + (a·b)², as AttentionKernel.
          Lanes ab = Lanes::Zero(), cross = Lanes::Zero();
          for (int l = 0; l < L_; ++l) {
            const Lanes xy = Ah[l] * Ag[l];
            ab += xy;
            cross += xy * (1.0 - Ah[l] - Ag[l]);
          }
          out[q] = chg * (cross + ab * ab);
          break;
        }
        case Activation::BayesSoftmax: {
          const double csum = c_[h] + c_[g];
          Lanes sum = Lanes::Zero();
          for (int l = 0; l < L_; ++l) sum += Ah[l] * Ag[l] * (chg - csum * a_[l] + a2);
          out[q] = sum;
          break;
        }
        case Activation::Linear:
          out[q] = Lanes::Constant(chg * L_);
          break;
      }
    }
}

}  // namespace headspec
