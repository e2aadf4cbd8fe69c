#!/usr/bin/env bash
# Run each libFuzzer target of tests/fuzz/ for SECONDS (default 30), one after
# the other, starting from the seed corpora in tests/fuzz/corpus/<target>/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Targets: manifest clang_cli depfile cache_entry offload_log. Builds them in
# build-san/ (OB_SANITIZE_BUILD; see scripts/sanitize.sh) when missing. New
# inputs go to build-san/fuzz-corpus/<target>/, crashes to
# build-san/fuzz-artifacts/; prints executions per target; exits 1 on a finding.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
secs=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(manifest clang_cli depfile cache_entry offload_log); fi
build=${OB_SANITIZE_BUILD:-build-san}
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f "$build/build.ninja" ]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DCMAKE_CXX_COMPILER=clang++-22 -DOFFLOAD_BUILD_TESTS=ON -DOFFLOAD_BUILD_SANITIZE=ON \
    "${launcher[@]}" >/dev/null
fi
# Built when missing (scripts/sanitize.sh, which CI runs first, builds them;
# after a change: cmake --build build-san --target fuzz_targets).
for t in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/fuzz_$t" ]; then cmake --build "$build" -j "$jobs" --target fuzz_targets; break; fi
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/fuzz-artifacts"
status=0
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz-artifacts/$t.log"
  if "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
      "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log)"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz: $t: ${secs} s, $execs executions, $cov, corpus $(ls "$corpus" | wc -l): $result"
  if [ "$result" != ok ]; then grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5; fi
done
exit $status
