#!/bin/bash
# One device call: check and time every dumped tensor-core kernel (tc_check.py), then a short
# Nsight Compute look at the S0 kernel and the SASS instruction mix of the S0/S3 kernels.
# usage (repo root, on the GPU machine): bench/kernels/tc_run.sh DIR   (DIR holds cases.json,
# the .cu files and their .cubin built with nvcc -cubin -gencode=arch=compute_90a,code=sm_90a)
dir=$1
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
PYTHONUNBUFFERED=1 timeout 300 python3 bench/kernels/tc_check.py "$dir" --reps 20 --out "$out/check.json" 2>&1 | tee "$out/check.log" | grep -v '^{'
for k in s0_convt3d_relu_stats s3_linear_gn_min; do
  echo "== SASS mix $k"; cuobjdump -sass "$dir/$k.cubin" | grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -12
done
if [ -n "$NCU" ] && command -v ncu >/dev/null; then
  timeout 150 ncu --clock-control none -k regex:"^s0_convt3d_relu_stats$" -c 1 --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
    python3 bench/kernels/tc_check.py "$dir" --only s0_convt3d_relu_stats --reps 1 > "$out/ncu.txt" 2>&1
  grep -E "Throughput|Stall|Issue|Pipe|Warp Cycles|Duration|Eligible|Active" "$out/ncu.txt" | head -60
fi
