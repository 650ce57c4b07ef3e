#!/usr/bin/env bash
# The main job: set-up, build, then sinterc on each workload of ../shared/workloads:
# verify (typed graph), explain (fusion plan), compile (cubins for sm_90a into
# build/workloads/<name>/, no GPU needed) and, where a GPU is present, check (GPU vs the
# float64 CPU reference) and run --bench.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${BUILD_DIR:-$root/build}"
sinterc="$build/tools/sinterc"
workloads="${WORKLOADS:-$root/../shared/workloads}"
arch="${ARCH:-sm_90a}"

gpu=0
if [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; then
  gpu=1
fi

for f in "$workloads"/*.sir; do
  name="$(basename "$f" .sir)"
  echo "== $name"
  "$sinterc" verify "$f"
  "$sinterc" explain "$f" --arch "$arch"
  "$sinterc" compile "$f" --arch "$arch" -o "$build/workloads/$name"
  if [ "$gpu" = 1 ]; then
    "$sinterc" check "$f"
    "$sinterc" run "$build/workloads/$name" --bench 20
  fi
done
[ "$gpu" = 1 ] || echo "no GPU here: workloads verified and compiled for $arch, not run"
