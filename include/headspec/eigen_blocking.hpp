#pragma once
// Machine-independent matrix products. Eigen splits a large product into blocks whose sizes
// it derives from the processor's cache sizes (read with CPUID), and the blocks decide the
// order in which each entry's terms are summed: the same build gave other last bits on a
// processor with 48 KiB of L1 data cache than on one with 32 KiB (the MNIST engine's
// products over D = 784). Fixing the sizes makes every product the same sums everywhere.
namespace headspec {

/// Sets Eigen's cache sizes to fixed values (32 KiB, 1 MiB, 32 MiB) where they differ; the
/// CLI and the Python module call it before any work, the MNIST engine on construction.
void fix_eigen_blocking();

}  // namespace headspec
