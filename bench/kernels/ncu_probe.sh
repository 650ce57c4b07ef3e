#!/usr/bin/env bash
# Nsight Compute look at chosen kernels in one device call (GPU machine, repo root).
#   bench/kernels/ncu_probe.sh CARRY TC_CASES GRAPHS
# CARRY: a bench/device_prepare.sh folder; TC_CASES: comma-separated tensor-core harness
# cases (compiled here with nvcc, profiled through tc_check.py); GRAPHS: comma-separated
# NAME=FILE.sir[:KERNEL_REGEX] run with `sinterc run --bench 1` (KERNEL_REGEX default: the
# graph's longest kernel is not known in advance, so give it; default "k0_").
# Writes $OUT/ncu-<name>.txt (sections: speed of light, warp states, compute, memory).
set -uo pipefail
carry=$1; cases=${2:-}; graphs=${3:-}
out=${OUT:-/tmp}
sections="--section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats"
export SINTER_CACHE_DIR=/tmp/sinter-cache
IFS=, read -ra cl <<< "$cases"
for c in "${cl[@]}"; do
  [ -n "$c" ] || continue
  # The case's kernels: its own, and the ones that prepare its operands (weight rows, staged
  # input) where it has them.
  for k in "$c" "${c}_pack" "${c}_rows" "${c}_stage"; do
    [ -f "$carry/tc/$k.cu" ] || continue
    /usr/local/cuda/bin/nvcc -cubin -gencode=arch=compute_90a,code=sm_90a -Itemplates -Xptxas -v \
      -o "$carry/tc/$k.cubin" "$carry/tc/$k.cu" > "$carry/tc/$k.ptxas.log" 2>&1 || echo "nvcc failed: $k"
  done
  grep -E "registers|spill" "$carry/tc/$c.ptxas.log" | head -3
  timeout 200 ncu --clock-control none -k "regex:^$c\$" -c 1 $sections \
    python3 bench/kernels/tc_check.py "$carry/tc" --only "$c" --reps 1 > "$out/ncu-$c.txt" 2>&1
  echo "== $c rc=$?"
done
IFS=, read -ra gl <<< "$graphs"
for g in "${gl[@]}"; do
  [ -n "$g" ] || continue
  name=${g%%=*}; rest=${g#*=}; file=${rest%%:*}; k=k0_
  [[ "$rest" == *:* ]] && k=${rest#*:}
  "$carry/sinterc" run "$file" --bench 20 2>&1 | tail -2
  timeout 200 ncu --clock-control none -k "regex:$k" -c 1 $sections \
    "$carry/sinterc" run "$file" --bench 1 > "$out/ncu-$name.txt" 2>&1
  echo "== $name rc=$?"
done
