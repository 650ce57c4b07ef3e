#!/bin/bash
# Writes the conv_direct / norm kernels of tests/kernels_direct/Cases.h and their cubins
# (sm_90a) into .carry/direct for bench/kernels/direct_check.py on the GPU machine.
# Usage (repo root): bench/kernels/direct_prepare.sh BUILD_DIR
set -e
out=.carry/direct
mkdir -p $out
rm -f $out/*.cu $out/*.cubin $out/cases.json
"$1"/tests/kernels_direct/direct_dump $out
for f in $out/*.cu; do
  nvcc -cubin -gencode arch=compute_90a,code=sm_90a -std=c++17 -Itemplates "$f" \
    -o "${f%.cu}.cubin" &
  [ "$(jobs -r | wc -l)" -ge 2 ] && wait -n 2>/dev/null || true
done
wait
ls $out/*.cubin | wc -l
