#!/usr/bin/env bash
# The theory's right-hand side: bench_theory (C++) beside the plain NumPy implementation,
# one core each for the per-core comparison (docs/performance.md).
# Usage: bench/theory_vs_numpy.sh [BUILD_DIR] [NUMPY_CURVE_T]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
curve_t=${2:-150}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
/usr/bin/python3 bench/theory_numpy.py --N 10000 --evals 20 --curve-T "$curve_t"
unset OMP_NUM_THREADS
"$build"/bench/bench_theory --benchmark_min_time=2 --benchmark_counters_tabular=true
