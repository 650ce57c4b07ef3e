#!/usr/bin/env bash
# One device call that checks and times everything a change needs, in order of cost:
#   1. the generic kernels' GPU cases (tests/kernels_generic/gpu_check.py), if their cubins
#      were carried;
#   2. the GPU test binaries that were carried (every op, pattern and corpus graph at small
#      scale against the float64 CPU reference);
#   3. bench/corpus_bench.py over the full-size corpus (sinter vs eager vs torch.compile, and a
#      second sinter binary for before/after when one was carried);
#   4. bench/side_by_side.py on the five workloads;
#   5. (STEPS=onnx, not in the default list) bench/onnx_device_check.py: the five workloads and
#      the corpus exported by both PyTorch exporters, imported by the carried sinterc, fused
#      and run against PyTorch (about four minutes; ONNX_BUDGET seconds, default 270);
#   6. (STEPS=tc, not in the default list) the tensor-core kernel cases (every conv_igemm and
#      gemm case, the GEMMs on every wgmma tile): compiled with nvcc for sm_90a, checked against
#      float64 and the benchmarked ones timed by bench/kernels/tc_check.py; TC_ARGS adds its
#      arguments (e.g. "--kind gemm --only _wg").
# Prepare here with bench/device_prepare.sh (it fills CARRY, default .carry/run); on the GPU
# machine, from the repository root:  bench/device_run.sh [CARRY]   (results under $OUT)
# STEPS (default "generic tests corpus workloads") picks the steps and their order; CORPUS_ARGS adds arguments to
# corpus_bench.py (e.g. "--only a,b --no-compile").
set -uo pipefail
carry=${1:-.carry/run}
final=${OUT:-/tmp/sinter-out}
out=/tmp/sinter-run  # everything is written here; $OUT gets a tarball and the summaries
rm -rf "$out"
steps=${STEPS:-generic tests corpus workloads}
mkdir -p "$out" "$final"
export PYTHONUNBUFFERED=1 SINTER_CACHE_DIR=/tmp/sinter-cache
export SINTER_CORPUS_DIR=$PWD/bench/corpus SINTER_WORKLOADS_DIR=$PWD/$carry/workloads
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.used --format=csv,noheader

step_generic() {
  [ -d "$carry/generic" ] || return 0
  echo "== generic kernels"
  timeout 240 python3 tests/kernels_generic/gpu_check.py "$carry/generic" --out "$out/generic.json" \
    > "$out/generic.log" 2>&1
  echo "rc=$?"; grep -vE '^\{' "$out/generic.log" | tail -25
}

step_tests() {
  for t in gpu_tests gpu_thread_tests gpu_corpus_tests gpu_workload_tests; do
    [ -x "$carry/$t" ] || continue
    echo "== $t"
    SINTER_WORKLOADS=${SINTER_WORKLOADS:-s1,s4} timeout "${TEST_TIMEOUT:-300}" "$carry/$t" --gtest_brief=1 \
      > "$out/$t.log" 2>&1
    echo "rc=$?"; grep -E "FAILED|PASSED|Failure|rel|error" "$out/$t.log" | head -40
  done
}

step_corpus() {
  echo "== corpus"
  extra=()
  [ -x "$carry/base/sinter_bench" ] && extra=(--extra-bench-bin "base=$carry/base/sinter_bench")
  timeout "${CORPUS_TIMEOUT:-540}" python3 bench/corpus_bench.py --bench-bin "$carry/sinter_bench" --out "$out" \
    "${extra[@]}" ${CORPUS_ARGS:-} > "$out/corpus.log" 2>&1
  echo "rc=$?"; tail -80 "$out/corpus.log"
}

step_workloads() {
  echo "== workloads"
  timeout 300 python3 bench/side_by_side.py --bench-bin "$carry/sinter_bench" \
    --workloads "$carry/workloads" --out "$out" --iterations 30 > "$out/workloads.log" 2>&1
  echo "rc=$?"; tail -12 "$out/workloads.log"
}

step_tc() {
  [ -d "$carry/tc" ] || { echo "no tc cases in $carry (bench/device_prepare.sh writes them)"; return 0; }
  echo "== tensor-core cases"
  local templates=$PWD/templates
  (cd "$carry/tc" && ls *.cu | sed 's/\.cu$//' | xargs -P"$(nproc)" -I{} sh -c \
    "${NVCC:-/usr/local/cuda/bin/nvcc} -cubin -gencode=arch=compute_90a,code=sm_90a -I$templates -Xptxas -v -o {}.cubin {}.cu \
       > {}.ptxas.log 2>&1 || echo 'nvcc failed: {}'")
  grep -H "spill" "$carry"/tc/*.ptxas.log | grep -v " 0 bytes spill" | head -20
  timeout "${TC_TIMEOUT:-300}" python3 bench/kernels/tc_check.py "$carry/tc" --reps 10 \
    --out "$out/tc.json" ${TC_ARGS:-} > "$out/tc.log" 2>&1
  echo "rc=$?"; grep -v '^{' "$out/tc.log" | tail -80
}

step_onnx() {
  echo "== onnx"
  [ -x "$carry/sinterc" ] || { echo "no sinterc in $carry (bench/device_prepare.sh copies it)"; return 0; }
  timeout "${ONNX_TIMEOUT:-330}" python3 bench/onnx_device_check.py --sinterc "$carry/sinterc" \
    --workloads "$carry/workloads" --out "$out" --budget "${ONNX_BUDGET:-270}" ${ONNX_ARGS:-} \
    > "$out/onnx.log" 2>&1
  echo "rc=$?"; tail -120 "$out/onnx.log"
}

for s in $steps; do
  "step_$s"
done
# At most 8 files come back from the GPU machine: one tarball of everything, and the tables.
tar czf "$final/results.tgz" -C "$out" --exclude='*.safetensors' .
cp "$out"/*.md "$final/" 2>/dev/null || true
