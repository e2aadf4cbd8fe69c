#!/usr/bin/env bash
# Run each libFuzzer target of tests/fuzz/ for SECONDS (default 30), one after
# the other, starting from the seed corpora in tests/fuzz/corpus/<target>/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Targets: manifest clang_cli depfile cache_entry remote_value offload_log resp_reader rust_mir, in build-san/
# (OB_SANITIZE_BUILD; see scripts/sanitize.sh). New inputs go to
# build-san/fuzz-corpus/<target>/, findings to build-san/fuzz-artifacts/;
# prints executions per target; exits 1 on a finding. scripts/test.sh runs it
# with 30 s (OB_SKIP_FUZZ=1 skips it there).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
secs=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(manifest clang_cli depfile cache_entry remote_value offload_log resp_reader rust_mir); fi
build=${OB_SANITIZE_BUILD:-build-san}
# Built by scripts/sanitize.sh (which CI runs first) or here when missing;
# after a change: scripts/sanitize.sh --build-only.
for t in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/fuzz_$t" ]; then bash scripts/sanitize.sh --build-only; break; fi
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
  if [ "$result" != ok ]; then tail -40 "$log"; fi
done
exit $status
