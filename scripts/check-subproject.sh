#!/usr/bin/env bash
# Checks sinter as a subproject (add_subdirectory / FetchContent): an outer project that adds
# the source tree configures with GoogleTest and CLI11 made unfindable, gets sinter::sinter
# and nothing else of sinter's (no tests, benchmarks, tools or install rules). Configure only:
# the libraries themselves are built and used by the other checks. CTest runs it as
# SubprojectNeedsNoGoogleTest.
#
#   scripts/check-subproject.sh WORK_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:?usage: check-subproject.sh WORK_DIR}"
fail() { echo "check-subproject: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/outer"
work="$(cd "$work" && pwd)"
cat >"$work/outer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(outer LANGUAGES CXX)
add_subdirectory("$root" sinter)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE sinter::sinter)
CMAKE
cat >"$work/outer/main.cpp" <<'CPP'
#include <sinter/sinter.h>
int main() { return sinter::sinterVersion().empty() ? 1 : 0; }
CPP
cmake -S "$work/outer" -B "$work/build" -G Ninja -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log" >&2
  fail "an outer project could not add sinter without GoogleTest and CLI11"
}
targets="$(ninja -C "$work/build" -t targets all)"
for t in app sinter/ir/libsinter_ir.a sinter/compiler/libsinter_compiler.a; do
  grep -q "^$t:" <<<"$targets" || fail "the outer project has no target $t"
done
for t in sinterc sinter-cache sinter_bench ir_tests install; do
  if grep -Eq "(^|/)$t:" <<<"$targets"; then
    fail "sinter as a subproject still builds $t"
  fi
done
echo "check-subproject: an outer project adds sinter with neither GoogleTest nor CLI11"
