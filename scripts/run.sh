#!/usr/bin/env bash
# The main job: set-up, build, then run sinterc on each workload in ../shared/workloads.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
sinterc="${BUILD_DIR:-$root/build}/tools/sinterc"
workloads="${WORKLOADS:-$root/../shared/workloads}"
for f in "$workloads"/*.sir; do
  echo "== $(basename "$f")"
  "$sinterc" verify "$f"
done
