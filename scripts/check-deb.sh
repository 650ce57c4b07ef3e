#!/usr/bin/env bash
# Checks the Debian package as a user gets it: builds it (scripts/package-deb.sh), checks its
# control fields and contents, checks that this machine satisfies its Depends, installs it with dpkg into a scratch root, runs `sinterc --version` and
# `sinter-cache --version` from there, and configures examples/ against the packaged CMake
# files. CTest runs it as DebianPackageInstallsAndRuns.
#
#   scripts/check-deb.sh [BUILD_DIR [WORK_DIR]]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)"
work="${2:-$build/deb-check}"
fail() { echo "check-deb: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
deb="$("$root/scripts/package-deb.sh" "$build" "$work")"
version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")"
[ "$(basename "$deb")" = "sinter_${version}_amd64.deb" ] || fail "unexpected file name $deb"
echo "$deb"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = sinter ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', not $version"
[ "$(field Architecture)" = amd64 ] || fail "Architecture is '$(field Architecture)'"
grep -q "libc6" <<<"$(field Depends)" || fail "Depends lacks libc6: '$(field Depends)'"
echo "Depends: $(field Depends)"
contents="$(dpkg-deb -c "$deb")"
for f in ./usr/bin/sinterc ./usr/bin/sinter-cache ./usr/include/sinter/sinter.h \
         ./usr/include/sinter/compiler/Jit.h ./usr/lib/libsinter_runtime.a \
         ./usr/lib/cmake/sinter/sinterConfig.cmake ./usr/share/doc/sinter/embedding.md; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done

# Would it install here? Every Depends must be satisfied by what this machine has
# (dpkg-checkbuilddeps checks any dependency string, as any user, changing nothing).
printf 'Source: sinter\n\nPackage: sinter\nArchitecture: any\n' >"$work/control"
dpkg-checkbuilddeps -d "$(field Depends)" "$work/control" ||
  fail "this machine lacks what $(basename "$deb") depends on"
# Install for real, into a root of its own (its own dpkg database, in which no other
# package is installed: hence --force-depends; the check above covered them).
inst="$work/root"
mkdir -p "$inst/var/lib/dpkg/info" "$inst/var/lib/dpkg/updates"
touch "$inst/var/lib/dpkg/status"
dpkg --root="$inst" --force-depends --force-not-root -i "$deb" >"$work/dpkg.log" 2>&1 || {
  cat "$work/dpkg.log" >&2
  fail "dpkg --root could not install $deb"
}
dpkg --root="$inst" -s sinter | grep -q "^Status: install ok installed" ||
  fail "dpkg does not list sinter as installed in $inst"

got="$("$inst/usr/bin/sinterc" --version)"
echo "$got"
[[ "$got" == "sinterc $version (NVRTC "* ]] || fail "packaged sinterc --version printed '$got'"
got="$("$inst/usr/bin/sinter-cache" --version)"
echo "$got"
[ "$got" = "sinter-cache $version" ] || fail "packaged sinter-cache --version printed '$got'"

# The packaged CMake files, moved away from /usr, still find their targets.
cmake -S "$root/examples" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$inst/usr" \
  >"$work/configure.log" 2>&1 || {
  cat "$work/configure.log" >&2
  fail "configuring examples/ against the package's files failed"
}
grep -q "sinter_DIR:PATH=$inst/usr/lib/cmake/sinter" "$work/consumer/CMakeCache.txt" ||
  fail "examples/ did not find the packaged sinterConfig.cmake"
echo "check-deb: $(basename "$deb") installs, runs sinterc --version, and its CMake package loads"
