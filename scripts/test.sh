#!/usr/bin/env bash
# Set up a fresh machine, build offload-build and run the whole test suite:
# ctest (unit and integration tests), then the unit tests and a handful of
# real builds under ASan + UBSan (scripts/sanitize.sh) and each libFuzzer
# target for 30 s (scripts/fuzz.sh). This is the README's test command;
# .ci/run calls it. Any failure or finding exits non-zero.
#   OB_SKIP_SANITIZE=1  skip the sanitizer build and run (locally)
#   OB_SKIP_FUZZ=1      skip the fuzzing
# Arguments go to ctest (e.g. -R launcher).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOFFLOAD_BUILD_TESTS=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" "$@"
echo "test: build and ctest in $((SECONDS - start)) s"
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
