#!/usr/bin/env bash
# Set up a fresh machine, build offload-build and run the whole test suite:
# ctest (unit and integration tests), then the unit tests and a handful of
# real builds under ASan + UBSan (scripts/sanitize.sh) and each libFuzzer
# target for 30 s (scripts/fuzz.sh). This is the README's test command;
# .ci/run calls it. Any failure or finding exits non-zero, and so does a test
# skipped for a reason tests/allowed_skips.txt does not allow.
#   OB_SKIP_SANITIZE=1  skip the sanitizer build and run (locally)
#   OB_SKIP_FUZZ=1      skip the fuzzing
# Arguments go to ctest (e.g. -R launcher).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
# LLVM 19 and 16 in private prefixes beside LLVM 22 (tests/integration/test_llvm_versions.cpp).
bash scripts/setup.sh --llvm 19 >/dev/null
bash scripts/setup.sh --llvm 16 >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOFFLOAD_BUILD_TESTS=ON
cmake --build build -j "$jobs"
# Skipped tests are listed; one skipped for a reason tests/allowed_skips.txt
# does not allow (something setup.sh installs) fails the run, as a failure does.
ctest_out=build/Testing/ctest-output.txt
mkdir -p build/Testing
status=0
ctest --test-dir build --output-on-failure -j "$jobs" "$@" 2>&1 | tee "$ctest_out" || status=$?
bash scripts/check_skips.sh build "$ctest_out" || status=1
echo "test: build and ctest in $((SECONDS - start)) s"
[ "$status" -eq 0 ] || exit "$status"
if [ "${OB_SKIP_SANITIZE:-0}" = 0 ]; then
  start=$SECONDS
  bash scripts/sanitize.sh
  echo "test: sanitizers in $((SECONDS - start)) s"
fi
if [ "${OB_SKIP_FUZZ:-0}" = 0 ]; then
  start=$SECONDS
  bash scripts/fuzz.sh 30
  echo "test: fuzzing in $((SECONDS - start)) s"
fi
