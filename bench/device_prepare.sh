#!/usr/bin/env bash
# Fills the carry folder for bench/device_run.sh (default .carry/run, ignored by git): the
# sinter_bench, sinterc and GPU test binaries of BUILD_DIR (default ./build), the generic kernels'
# sm_90a cubins, the tensor-core kernel cases (sources and cases.json of
# `kernels_tc_tests --gtest_filter=Dump.*`, compiled on the GPU machine by device_run.sh's tc
# step), and the five workloads (../shared does not travel to the GPU machine).
# BASE_BENCH=PATH adds a second sinter_bench (e.g. built from an earlier commit) for
# before/after timings in the same run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build=${BUILD_DIR:-$root/build}
carry=${1:-$root/.carry/run}
rm -rf "$carry"
mkdir -p "$carry/workloads" "$carry/generic"
cp "$build/bench/sinter_bench" "$build/tools/sinterc" "$carry/"
for t in gpu/gpu_tests gpu/gpu_thread_tests gpu/gpu_corpus_tests gpu/gpu_workload_tests; do
  cp "$build/tests/$t" "$carry/"
done
cp "$root"/../shared/workloads/*.sir "$carry/workloads/"
"$build/tests/kernels_generic/generic_device_cases" "$carry/generic" >/dev/null
SINTER_TC_DUMP="$carry/tc" "$build/tests/kernels_tc/kernels_tc_tests" --gtest_filter='Dump.*' >/dev/null
if [ -n "${BASE_BENCH:-}" ]; then
  mkdir -p "$carry/base"
  cp "$BASE_BENCH" "$carry/base/sinter_bench"
fi
strip "$carry"/sinter_bench "$carry"/sinterc "$carry"/gpu_* "$carry"/base/* 2>/dev/null || true
du -sh "$carry"
