#pragma once
// The small models the MNIST engine tests train (docs/model.md §11).
#include "headspec/model.hpp"

namespace headspec::testing {

inline ModelSpec small_model(Activation a, int H, int L) {
  ModelSpec m;
  m.activation = a;
  m.H = H;
  m.L = L;
  return m;
}

}  // namespace headspec::testing
