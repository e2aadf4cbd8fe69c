#!/usr/bin/env bash
# Set up a fresh machine, build offload-build, then build examples/saxpy-c for the
# x86_64 host-device target and run it, proving with the offload runtime's own
# log (run --verify) that the kernel was launched on an offload device.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOFFLOAD_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target offload-build
build/offload-build doctor || true
exec build/offload-build -C "${1:-examples/saxpy-c}" run --verify
