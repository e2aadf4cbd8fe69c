#!/usr/bin/env bash
# Install everything offload-build needs to build and test, from Debian packages.
# Idempotent and non-interactive: safe to run again; skips apt when all is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev catch2
  libssl-dev libxxhash-dev libzstd-dev
  clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22 liboffload-22-dev
  ccache hyperfine libclang-rt-22-dev
  libhiredis-dev libcurl4-openssl-dev redis-server nginx
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
