#!/usr/bin/env bash
# Configures and builds sinter in ./build (Release, Ninja) with its tests and benchmarks.
# BUILD_DIR overrides the folder.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="${JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DSINTER_BUILD_TESTS=ON -DSINTER_BUILD_BENCH=ON >/dev/null
fi
cmake --build "$build" -j "$jobs"
