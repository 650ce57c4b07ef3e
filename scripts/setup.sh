#!/usr/bin/env bash
# Installs what sinter needs to build and test on Debian/Ubuntu, with apt-get.
# Idempotent and quiet: prints nothing when everything is already there.
set -euo pipefail

packages=(cmake ninja-build g++ llvm-14-dev libspdlog-dev libfmt-dev libgtest-dev
          nlohmann-json3-dev libcli11-dev zlib1g-dev libtinfo-dev python3
          dpkg-dev libprotobuf-dev protobuf-compiler libonnx-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: the CUDA toolkit (NVRTC and headers) is expected in /usr/local/cuda" >&2
  exit 1
fi
