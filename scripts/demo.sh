#!/usr/bin/env bash
# Set up a fresh machine (scripts/setup.sh --demo), build offload-build in
# Release into build-release/ (what `cmake --install build-release` installs,
# nothing else: no tests), then build examples/saxpy-c for the x86_64
# host-device target and run it, proving with the offload runtime's own log
# (run --verify) that the kernel was launched on an offload device.
#   scripts/demo.sh [PROJECT_DIR]    (default examples/saxpy-c)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build-release
jobs=$(nproc 2>/dev/null || echo 2)
total=$SECONDS

# step NAME COMMAND...: say what runs, run it, say how long it took.
step() {
  local name=$1 start=$SECONDS
  shift
  echo "demo: $name"
  "$@"
  echo "demo: $name: done in $((SECONDS - start)) s"
}

step "packages (scripts/setup.sh --demo; apt only for what is missing)" bash scripts/setup.sh --demo
# Without the remote execution client (src/reapi: gRPC and generated protos,
# built when gRPC happens to be installed; setup.sh --demo does not install
# it, and the demo does not use it).
step "configuring a Release build in $build/" \
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOFFLOAD_BUILD_TESTS=OFF \
    -DOFFLOAD_BUILD_REMOTE_EXECUTION=OFF
echo "demo: compiling offload-build with $jobs jobs (about 3.5 CPU-minutes the first time: under 2" \
     "minutes on 2 idle cores; seconds when $build/ is up to date)"
step "building offload-build, cargo-offload and the stable-names library" \
  cmake --build "$build" -j "$jobs"
"$build/offload-build" doctor || true
project=${1:-examples/saxpy-c}
step "building and running $project with run --verify" \
  "$build/offload-build" -C "$project" run --verify
echo "demo: all done in $((SECONDS - total)) s. To put offload-build on PATH:"
echo "  cmake --install $build --prefix ~/.local && export PATH=\"\$HOME/.local/bin:\$PATH\""
