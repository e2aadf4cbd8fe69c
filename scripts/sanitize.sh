#!/usr/bin/env bash
# An ASan + UBSan build (clang-22) of the library, the program, the unit tests
# and the libFuzzer targets (scripts/fuzz.sh runs those) in build-san/
# (override with OB_SANITIZE_BUILD), then the unit tests and a handful of real
# builds under the sanitizers. Any sanitizer report (leaks included) or failed
# check exits non-zero. scripts/test.sh runs it (OB_SKIP_SANITIZE=1 skips it).
#   scripts/sanitize.sh [--build-only]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${OB_SANITIZE_BUILD:-build-san}
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
start=$SECONDS
# -O1 for speed under ASan; line tables are all a report's stack needs (full
# debug info made the build a third slower). Without the remote execution
# module: a shared library built with ASan does not link with --no-undefined,
# and it is tested unsanitized by ctest against Bazel's worker.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_CXX_COMPILER=clang++-22 \
  -DOFFLOAD_BUILD_TESTS=ON -DOFFLOAD_BUILD_SANITIZE=ON "${launcher[@]}" \
  -DOFFLOAD_BUILD_REMOTE_EXECUTION=OFF >/dev/null
# Not the integration test binary: the builds below drive the sanitized program directly.
cmake --build "$build" -j "$jobs" --target offload-build ob_unit_tests fuzz_targets
echo "sanitize: built in $((SECONDS - start)) s"
if [ "${1:-}" = --build-only ]; then exit 0; fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
"$build/tests/ob_unit_tests"
echo "sanitize: unit tests in $((SECONDS - start)) s"

# A handful of real builds with the sanitized program, each checked.
start=$SECONDS
ob="$(cd "$build" && pwd)/offload-build"
tmp=$(mktemp -d /tmp/ob-sanitize-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OFFLOAD_BUILD_CACHE_DIR="$tmp/cache" CI=1
unset OFFLOAD_BUILD_SIGNING_KEY OFFLOAD_BUILD_SIGNING_KEY_FILE OFFLOAD_BUILD_CACHE_UMASK \
  OFFLOAD_BUILD_REMOTE_STORAGE LIBOMPTARGET_INFO OMP_TARGET_OFFLOAD
run() {  # run EXPECTED COMMAND...: it must succeed and print EXPECTED
  local expected=$1
  shift
  if ! "$@" >"$tmp/out" 2>&1 || ! grep -qF -- "$expected" "$tmp/out"; then
    echo "sanitize: FAILED (expected '$expected'): $*"
    cat "$tmp/out"
    exit 1
  fi
}
# Each example cold (built, run, offload proven), then from the cache.
for ex in saxpy-c vector-cxx bare-gpu; do
  cp -r "examples/$ex" "$tmp/$ex"
  rm -rf "$tmp/$ex/build"
  run "kernel launch" "$ob" -C "$tmp/$ex" --target host run --verify
  rm -rf "$tmp/$ex/build"
  run " 0 run" "$ob" -C "$tmp/$ex" --target host build
done
# A directory name that is not UTF-8, signed entries (in a cache of their
# own), a report; the cache checked.
mkdir -p "$tmp/d"$'\xff'
cp -r examples/saxpy-c "$tmp/d"$'\xff'/s
signed=(env OFFLOAD_BUILD_SIGNING_KEY=k OFFLOAD_BUILD_CACHE_DIR="$tmp/signed")
run "0 from cache" "${signed[@]}" "$ob" -C "$tmp/d"$'\xff'/s --report "$tmp/r.json" build
run " 0 corrupt" "${signed[@]}" "$ob" cache verify
# Launcher mode: a split compile of k\xff.c, then the same compile from the cache.
hits() { "$ob" cache stats --json | grep -o '"hits": *[0-9]*' | grep -o '[0-9]*$'; }
cp examples/saxpy-c/saxpy.c "$tmp/k"$'\xff'.c
for _ in 1 2; do
  before=$(hits)
  rm -f "$tmp/k.o"
  (cd "$tmp" && "$ob" /usr/lib/llvm-22/bin/clang -fopenmp \
    -fopenmp-targets=x86_64-unknown-linux-gnu -c "k"$'\xff'.c -o k.o)
  test -s "$tmp/k.o"
done
[ "$(hits)" -gt "$before" ] || { echo "sanitize: FAILED: the second launcher compile was no cache hit"; exit 1; }
echo "sanitize: real builds in $((SECONDS - start)) s"
echo "sanitize: unit tests and real builds clean under ASan + UBSan"
