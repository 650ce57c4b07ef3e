#!/usr/bin/env bash
# Checks sinter as an outside project sees it: installs a finished build to a scratch prefix
# (cmake --install), configures and builds examples/ against that prefix with
# find_package(sinter), runs the example (without a GPU it compiles its kernels with NVRTC
# and says so) and the installed tools. CTest runs it as InstallTreeBuildsTheExample.
#
#   scripts/check-install.sh [BUILD_DIR [WORK_DIR]]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)"
work="${2:-$build/install-check}"
fail() { echo "check-install: $*" >&2; exit 1; }

mkdir -p "$work"
work="$(cd "$work" && pwd)"
prefix="$work/prefix"
consumer="$work/consumer"
rm -rf "$prefix" "$consumer"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || {
  cat "$work/install.log" >&2
  fail "cmake --install $build failed"
}
for f in bin/sinterc bin/sinter-cache include/sinter/sinter.h include/sinter/compiler/Jit.h \
         include/sinter/runtime/Executable.h lib/libsinter_compiler.a \
         lib/cmake/sinter/sinterConfig.cmake lib/cmake/sinter/sinterConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || fail "the install tree lacks $f"
done
# The package must stand on its own: no path into the source or build tree.
if grep -rlF -e "$root" -e "$build" "$prefix/lib/cmake/sinter"; then
  fail "the installed CMake package refers to the source or build tree (files above)"
fi

version="$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' \
  "$prefix/lib/cmake/sinter/sinterConfigVersion.cmake")"
[ -n "$version" ] || fail "no PACKAGE_VERSION in sinterConfigVersion.cmake"

# The outside project, with only the prefix to go on.
cmake -S "$root/examples" -B "$consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log" >&2
  fail "configuring examples/ against $prefix failed"
}
grep -q "sinter_DIR:PATH=$prefix/lib/cmake/sinter" "$consumer/CMakeCache.txt" ||
  fail "examples/ did not find sinter in $prefix ($(grep sinter_DIR "$consumer/CMakeCache.txt"))"
cmake --build "$consumer" >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2
  fail "building examples/ against $prefix failed"
}
# Headers come from the prefix (which may lie inside the build tree), never from the source.
includes="$(ninja -C "$consumer" -t commands | grep -oE -- "(-I|-isystem )[^ ]+" |
  sed -E 's/^(-I|-isystem )//' | sort -u)"
while read -r dir; do
  case "$dir" in
    "$work"/*) ;;
    "$root"/*) fail "the example was compiled with $dir on its include path" ;;
  esac
done <<<"$includes"

out="$(SINTER_CACHE_DIR="$work/cache" "$consumer/convt3d_relu_gn" --small 2>&1)" || {
  echo "$out" >&2
  fail "the example failed"
}
echo "$out"
grep -q "^compiled [1-9][0-9]* kernels in" <<<"$out" || fail "the example compiled no kernels"
grep -Eq "^(no GPU here: compiled only|o: f32\[2,128,34,34,34\], mean)" <<<"$out" ||
  fail "the example neither ran nor said that there is no GPU"

got="$("$prefix/bin/sinterc" --version)"
echo "$got"
[[ "$got" == "sinterc $version (NVRTC "* ]] || fail "installed sinterc --version printed '$got'"
got="$("$prefix/bin/sinter-cache" --version)"
[ "$got" = "sinter-cache $version" ] || fail "installed sinter-cache --version printed '$got'"
printf 'graph g(%%x: f32[2,8]) {\n  %%y = relu(%%x)\n  return %%y\n}\n' >"$work/g.sir"
"$prefix/bin/sinterc" verify "$work/g.sir" | grep -q "relu" ||
  fail "installed sinterc verify did not print the graph"
echo "check-install: sinter $version installed to $prefix; examples/ built against it and ran"
