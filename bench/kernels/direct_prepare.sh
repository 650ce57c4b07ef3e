#!/bin/bash
# Writes the conv_direct / norm kernels of tests/kernels_direct/Cases.h and their cubins
# (sm_90a) for bench/kernels/direct_check.py on the GPU machine.
# Usage (repo root): bench/kernels/direct_prepare.sh BUILD_DIR [OUT_DIR [BASELINE_REV]]
# OUT_DIR defaults to .carry/direct. With BASELINE_REV (a git revision), the workload kernels
# are also built against that revision's templates/conv_direct.cuh with that revision's
# blocking (BASELINE_TUNING below: channels,rows,cols,threads per kernel) as variants named
# <kernel>__base, so that one GPU run times the old and the new template side by side.
set -e
out=${2:-.carry/direct}
mkdir -p $out
rm -rf $out/*.cu $out/*.cubin $out/cases.json $out/base
"$1"/tests/kernels_direct/direct_dump $out
if [ -n "$3" ]; then
  mkdir -p $out/base
  git show "$3":templates/conv_direct.cuh >$out/base/conv_direct.cuh
  python3 - "$out" <<'PY'
import json, re, sys
d = sys.argv[1]
cases = json.load(open(d + "/cases.json"))
# The blocking the baseline emitter chose for each workload kernel that still runs on
# conv_direct (docs/kernels-direct.md; S1 and S2 moved to conv_mma, and their old blockings
# no longer compile against the newer templates' float2 and clamping rules).
base = {"s4_convt3d_grouped": (8, 4, 2, 128)}
by = {c["name"]: c for c in cases}
for name, (cb, vh, vw, thr) in base.items():
    src = open(f"{d}/{name}.cu").read()
    c = dict(by[name])
    def setc(k, v):
        global src
        src, n = re.subn(r"(constexpr \w+ %s = )[^;]+;" % k, r"\g<1>%s;" % v, src)
        assert n == 1, k
    grid_x = c["grid"][0]
    rows = c["out"][1] + (c["padding"][1] % c["stride"][1] if c["transposed"] else 0)
    cols = c["out"][2] + (c["padding"][2] % c["stride"][2] if c["transposed"] else 0)
    hb, wb = -(-rows // vh), -(-cols // vw)
    spatial = c["out"][0] * hb * wb
    cg = c["Cout"] // c["groups"]
    setc("kCB", cb), setc("kVH", vh), setc("kVW", vw), setc("kThreads", thr)
    setc("kHBlocks", hb), setc("kWBlocks", wb), setc("kCBlocks", -(-cg // cb))
    src = src.replace(f"#define SINTER_KERNEL {name}", f"#define SINTER_KERNEL {name}__base")
    c["name"] = name + "__base"
    c["kind"], c["variant_of"] = "conv_variant", name
    c["grid"] = [-(-spatial // thr), c["groups"] * -(-cg // cb), c["N"]]
    c["block"] = [thr, 1, 1]
    c["tile"] = f"baseline template: {cb} channels x {vh}x{vw}, {thr} threads"
    open(f"{d}/base/{name}__base.cu", "w").write(src)
    cases.append(c)
json.dump(cases, open(d + "/cases.json", "w"), indent=1)
PY
  for f in $out/base/*.cu; do
    nvcc -cubin -gencode arch=compute_90a,code=sm_90a -std=c++17 -I$out/base -Itemplates "$f" \
      -o "$out/$(basename "${f%.cu}").cubin" &
    [ "$(jobs -r | wc -l)" -ge 2 ] && wait -n 2>/dev/null || true
  done
fi
for f in $out/*.cu; do
  nvcc -cubin -gencode arch=compute_90a,code=sm_90a -std=c++17 -Itemplates "$f" \
    -o "${f%.cu}.cubin" &
  [ "$(jobs -r | wc -l)" -ge 2 ] && wait -n 2>/dev/null || true
done
wait
ls $out/*.cubin | wc -l
