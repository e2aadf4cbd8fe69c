#!/usr/bin/env bash
# An ASan + UBSan build (clang-22) of the library, the program and the tests
# in build-san/ (override with OB_SANITIZE_BUILD), then the unit tests and a
# handful of real integration builds under the sanitizers. The same build
# holds the libFuzzer targets that scripts/fuzz.sh runs. scripts/test.sh calls it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${OB_SANITIZE_BUILD:-build-san}
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DCMAKE_CXX_COMPILER=clang++-22 -DOFFLOAD_BUILD_TESTS=ON -DOFFLOAD_BUILD_SANITIZE=ON \
  "${launcher[@]}" >/dev/null
# The program, the unit tests and the fuzz targets (not the integration test
# binary: the integration builds below drive the sanitized program directly).
cmake --build "$build" -j "$jobs" --target offload-build ob_unit_tests
if grep -q fuzz_targets "$build/build.ninja"; then cmake --build "$build" -j "$jobs" --target fuzz_targets; fi

# Any report fails the run. Leaks too, at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$build/tests/ob_unit_tests"

# A handful of real builds with the sanitized program, each checked.
ob="$root/$build/offload-build"
tmp=$(mktemp -d /tmp/ob-sanitize-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export OFFLOAD_BUILD_CACHE_DIR="$tmp/cache" CI=1
unset OFFLOAD_BUILD_SIGNING_KEY OFFLOAD_BUILD_SIGNING_KEY_FILE OFFLOAD_BUILD_CACHE_UMASK
expect() {  # expect TEXT FILE: the output must contain TEXT
  grep -qF -- "$1" "$2" || { echo "sanitize: expected '$1' in:"; cat "$2"; exit 1; }
}
for ex in saxpy-c vector-cxx bare-gpu; do
  cp -r "examples/$ex" "$tmp/$ex"
  rm -rf "$tmp/$ex/build"
  "$ob" -C "$tmp/$ex" --target host run --verify >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  expect "kernel launch" "$tmp/out"
  rm -rf "$tmp/$ex/build"
  "$ob" -C "$tmp/$ex" --target host build >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  expect " 0 run" "$tmp/out"
done
# Odd names, signing, the launcher.
mkdir -p "$tmp/d"$'\xff'
cp -r examples/saxpy-c "$tmp/d"$'\xff'/s
OFFLOAD_BUILD_SIGNING_KEY=k "$ob" -C "$tmp/d"$'\xff'/s --report "$tmp/r.json" build >"$tmp/out" 2>&1 \
  || { cat "$tmp/out"; exit 1; }
OFFLOAD_BUILD_SIGNING_KEY=k "$ob" cache verify >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
expect " 0 corrupt" "$tmp/out"
cp examples/saxpy-c/saxpy.c "$tmp/k"$'\xff'.c
(cd "$tmp" && "$ob" /usr/lib/llvm-22/bin/clang -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu \
  -c "k"$'\xff'.c -o k.o) || exit 1
test -s "$tmp/k.o"
echo "sanitize: unit tests and integration builds clean under ASan + UBSan"
