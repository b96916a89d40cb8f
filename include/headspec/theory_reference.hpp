#pragma once
// The stochastic theory's drift corrected along the unspecialised path (docs/model.md §12,
// "Reference path"; docs/stochastic-theory.md §6). With fixed samples the drift F_N of N
// samples differs from the exact F by a smooth error e_N = F_N − F. Along the plateau that
// error moves the unspecialised state and the spread's growth rate, and both act on the
// escape time as a bias (docs/stochastic-theory.md §5). Every run of the stochastic theory
// starts near the same symmetric path X°(t), so e_N is removed there, to first order in the
// spread, with a reference engine of N° ≫ N samples computed once:
//     F̃(x, t) = F_N(x) + [F_N° − F_N](X°(t)) + Σ_f [J_N° − J_N]_f(X°(t)) x_{M_{:,f}},
// f over the prior's sign-symmetric directions, J_f the block of the Jacobian on the column
// M_{:,f} (exactly α_f I + β_f (11ᵀ − I) at a symmetric state, by the head permutations).
// F̃ is F_N° on X°(t) and has its growth rate there; its error away from X° is of second
// order in x − X°(t) (times N^{-1/2}), and of F_N's size once a run has left the plateau.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "headspec/theory_engine.hpp"
#include "headspec/theory_integrator.hpp"

namespace headspec {

class ReferencePath {
 public:
  /// Integrates X°(t) from unspecialised_state with `reference`'s rates (stepper `method`,
  /// step dt, up to T) and tabulates at every t_k = k·dt the differences between `reference`
  /// and `drift` there: the rates and ε; and every kSlopeEvery time units the slopes
  /// (α_f, β_f) by central differences of step fd_step. Both engines must use a symmetric method (exactly equivariant rates).
  ReferencePath(const TheoryEngine& drift, const TheoryEngine& reference, Integrator method, double dt, double T,
                double fd_step = 1e-4);

  /// Adds the correction at time t (linear between grid times; the last beyond T) to the rates
  /// and ε of `ev`, an evaluation of `drift` at packed state x.
  void correct(const double* x, double t, TheoryEvaluation& ev) const;

  std::size_t points() const { return points_.size(); }
  double dt() const { return dt_; }
  /// X°(t_k), packed.
  const std::vector<double>& state(std::size_t k) const { return path_[k]; }

  /// The slopes' differences are tabulated every this many time units (rounded to whole steps).
  static constexpr double kSlopeEvery = 5;

 private:
  struct Point {
    std::vector<double> rate;  // F_N° − F_N at X°(t_k)
    double error = 0;          // ε's difference
  };
  struct Slopes {
    std::vector<double> alpha, beta;  // per sign-symmetric direction
  };
  void tabulate(const TheoryEngine& drift, const TheoryEngine& reference, const std::vector<double>& x, double t,
                const TheoryEvaluation& ref_at_x, double fd_step);
  void tabulate_slopes(const TheoryEngine& drift, const TheoryEngine& reference, const std::vector<double>& x,
                       double t, double fd_step);

  const StateLayout layout_;
  std::vector<int> directions_;
  double dt_;
  int64_t slope_steps_;
  std::vector<Point> points_;
  std::vector<Slopes> slopes_;
  std::vector<std::vector<double>> path_;
};

/// Throws ParameterError naming --sde-reference-mc when it is set (> 0) with the plain method.
void check_reference_method(int64_t reference_samples, SamplingMethod method);

/// The path of spec.reference_samples samples for the runs of `mc` (whose seed must be the
/// one every run uses, as the stochastic theory's runs do): the drift's engine and the
/// reference's, the same options but N°, integrated with spec's stepper, step and horizon.
/// None (nullptr) where `mc` resolves to laplace: its drift has no sampling error to correct.
std::shared_ptr<const ReferencePath> make_reference_path(const ModelSpec& model, const TheoryOptions& mc,
                                                         const IntegrationSpec& spec);

}  // namespace headspec
