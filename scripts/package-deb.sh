#!/usr/bin/env bash
# Builds the Debian package sinter_<version>_amd64.deb from a finished build with CPack and
# prints its path. Depends is read off the tools' shared libraries by dpkg-shlibdeps; NVRTC
# comes from the CUDA toolkit, which is no Debian package here, so it is left out of Depends
# (the package description names it).
#
#   scripts/package-deb.sh [BUILD_DIR [OUT_DIR]]     (OUT_DIR defaults to BUILD_DIR/package)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-${BUILD_DIR:-$root/build}}" && pwd)"
out="${2:-$build/package}"
fail() { echo "package-deb: $*" >&2; exit 1; }

version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")"
[ -n "$version" ] || fail "$build is not a configured sinter build"
for tool in sinterc sinter-cache; do
  [ -x "$build/tools/$tool" ] || fail "$build/tools/$tool is not built"
done

# dpkg-shlibdeps insists on running in a source package; an empty one will do.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/debian"
touch "$scratch/debian/control"
if ! (cd "$scratch" && dpkg-shlibdeps -O --ignore-missing-info \
        -e"$build/tools/sinterc" -e"$build/tools/sinter-cache") \
        >"$scratch/shlibs" 2>"$scratch/shlibs.err"; then
  cat "$scratch/shlibs.err" >&2
  fail "dpkg-shlibdeps failed"
fi
depends="$(sed -n 's/^shlibs:Depends=//p' "$scratch/shlibs")"
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -f "$out/sinter_${version}_amd64.deb"
(cd "$build" && cpack -G DEB -B "$out" -D CPACK_DEBIAN_PACKAGE_DEPENDS="$depends") \
  >"$scratch/cpack.log" 2>&1 || {
  cat "$scratch/cpack.log" >&2
  fail "cpack failed"
}
rm -rf "$out/_CPack_Packages"
deb="$out/sinter_${version}_amd64.deb"
[ -f "$deb" ] || fail "cpack did not write $deb"
echo "$deb"
