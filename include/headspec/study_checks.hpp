#pragma once
// Flag checks of the studies that the CLI and the Python module share (same messages;
// each throws UsageError naming the flag at fault).
#include <cstdint>

#include "headspec/model.hpp"

namespace headspec {

/// `headspec mnist`'s own flags (docs/model.md §11): --test-samples ≥ 1, --split-seed in
/// [0, 2^32), --train-fraction in (0, 1), --delta > 0, and batch × (L + 1) below 2^31 (the
/// token index of a batch is an int).
void check_mnist_flags(const ModelSpec& model, int test_samples, int64_t split_seed, double train_fraction,
                       double delta);

/// The 0-based spread direction of `headspec linearise --direction` (1-based; 0: the first
/// symmetric direction, returned as -1).
int linearisation_direction(int direction, const ModelSpec& model);

}  // namespace headspec
