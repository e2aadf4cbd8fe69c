#!/usr/bin/env bash
# Two builds of offload-build side by side in one run: B1, B2, B5, B6, B7 and
# a cold B10 of bench/run.sh (the same projects and commands, fewer
# comparisons) and B6u (a launcher command run unchanged), each
# measured for BEFORE and AFTER in the same hyperfine call, so a refactoring
# can show it costs nothing. Each binary gets caches of its own (their key
# formats may differ).
#   bench/before_after.sh BEFORE_BINARY AFTER_BINARY [--reps N]
# Prints a Markdown table (medians and CPU seconds; ratios after/before).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/before_after.sh BEFORE AFTER [--reps N]" >&2; exit 2; }
BEFORE=$(realpath "$1") AFTER=$(realpath "$2"); shift 2
REPS=3
[ "${1:-}" = --reps ] && REPS=$2
FAST=$((REPS * 10))
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
CLANG=$LLVM_BIN/clang
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup before_after hyperfine "$BEFORE" "$AFTER"
gen_c "$WORK/p10x3" 10 host,sm_90,gfx90a >/dev/null
gen_c "$WORK/p50x1" 50 host >/dev/null
for v in before after; do
  ob=$BEFORE; [ $v = after ] && ob=$AFTER
  cp -r "$WORK/p10x3" "$WORK/$v-p10x3"; cp -r "$WORK/p50x1" "$WORK/$v-p50x1"
  "$ob" -C "$WORK/$v-p10x3" --cache-dir "$WORK/$v-c10" -q build
  "$ob" -C "$WORK/$v-p50x1" --cache-dir "$WORK/$v-c50" -q build
done
b() { echo "$WORK/$1-p$2"; }
say "B1 cold build 10x3"
hf B1 "$REPS" \
  -n before --prepare "rm -rf $(b before 10x3)/build $WORK/before-cold" "$BEFORE -C $(b before 10x3) --cache-dir $WORK/before-cold -q build" \
  -n after --prepare "rm -rf $(b after 10x3)/build $WORK/after-cold" "$AFTER -C $(b after 10x3) --cache-dir $WORK/after-cold -q build"
say "B2 clean rebuild, warm cache, 10x3"
hf B2 "$REPS" \
  -n before --prepare "rm -rf $(b before 10x3)/build" "$BEFORE -C $(b before 10x3) --cache-dir $WORK/before-c10 -q build" \
  -n after --prepare "rm -rf $(b after 10x3)/build" "$AFTER -C $(b after 10x3) --cache-dir $WORK/after-c10 -q build"
say "B5 no-op 50x1"
"$BEFORE" -C "$(b before 50x1)" --cache-dir "$WORK/before-c50" -q build
"$AFTER" -C "$(b after 50x1)" --cache-dir "$WORK/after-c50" -q build
hf B5 "$FAST" --warmup 3 -N \
  -n before "$BEFORE -C $(b before 50x1) --cache-dir $WORK/before-c50 -q build" \
  -n after "$AFTER -C $(b after 50x1) --cache-dir $WORK/after-c50 -q build"
say "B6 launcher hit"
one="$CLANG $(oneshot_flags host,sm_90,gfx90a) -O2 -c $WORK/p10x3/src/tu_0.c -o $WORK/b6.o"
for v in before after; do
  ob=$BEFORE; [ $v = after ] && ob=$AFTER
  OFFLOAD_BUILD_CACHE_DIR=$WORK/$v-c6 $ob $one; OFFLOAD_BUILD_CACHE_DIR=$WORK/$v-c6 $ob $one
done
hf B6 "$FAST" --warmup 3 -N \
  -n before "env OFFLOAD_BUILD_CACHE_DIR=$WORK/before-c6 $BEFORE $one" \
  -n after "env OFFLOAD_BUILD_CACHE_DIR=$WORK/after-c6 $AFTER $one"
say "B6u launcher: a command run unchanged (clang --version)"
hf B6u "$FAST" --warmup 3 -N \
  -n before "env OFFLOAD_BUILD_CACHE_DIR=$WORK/before-c6 $BEFORE $CLANG --version" \
  -n after "env OFFLOAD_BUILD_CACHE_DIR=$WORK/after-c6 $AFTER $CLANG --version"
say "B7 fresh clone at another path, warm cache, 10x3"
fresh() { echo "rm -rf $WORK/clone && mkdir -p $WORK/clone && cp -r $WORK/$1-p10x3 $WORK/clone/p && rm -rf $WORK/clone/p/build"; }
hf B7 "$REPS" \
  -n before --prepare "$(fresh before)" "$BEFORE -C $WORK/clone/p --cache-dir $WORK/before-c10 -q build" \
  -n after --prepare "$(fresh after)" "$AFTER -C $WORK/clone/p --cache-dir $WORK/after-c10 -q build"
say "B10 remote execution: cold build 10x3 on Bazel's worker"
# Each binary its own worker (their action keys may agree); before each run
# every source gets a global of its own, so no action or entry matches: cold
# for the engine and the local cache.
cat >"$WORK/salt.sh" <<'SALT'
w=$(date +%s%N); k=0
for f in "$1"/src/*.c; do
  sed -i '/ba salt/d' "$f"
  printf '#pragma omp declare target /* ba salt */\nint ba_salt_%s_%d = %d; /* ba salt */\n#pragma omp end declare target /* ba salt */\n' "$w" "$k" "$k" >>"$f"
  k=$((k + 1))
done
SALT
declare -A WP
if [ -f "$(dirname "$BEFORE")/libob-remote-execution.so" ] && [ -f "$(dirname "$AFTER")/libob-remote-execution.so" ] &&
   NO_SANDBOX=1 bash "$ROOT/tests/support/reapi-worker/build.sh" "$WORK/jars" >"$WORK/jars.log" 2>&1; then
  for v in before after; do
    WP[$v]=$(free_port)
    mkdir -p "$WORK/$v-w"
    "$WORK/jars/start-worker.sh" "${WP[$v]}" "$WORK/$v-w/work" "$WORK/$v-w/cas" --jobs=2 >"$WORK/$v-w/log" 2>&1 &
    PIDS+=("$!")
    for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/${WP[$v]}") 2>/dev/null && break; sleep 0.1; done
  done
  remote() { echo "$1 -C $(b "$2" 10x3) --cache-dir $WORK/$2-r -q build --remote-execution grpc://127.0.0.1:${WP[$2]}"; }
  cold() { echo "bash $WORK/salt.sh $(b "$1" 10x3) && rm -rf $(b "$1" 10x3)/build $WORK/$1-r"; }
  # untimed: each worker's JVM warmed up by one cold build
  eval "$(cold before)" && $(remote "$BEFORE" before) && eval "$(cold after)" && $(remote "$AFTER" after)
  hf B10 "$REPS" \
    -n before --prepare "$(cold before)" "$(remote "$BEFORE" before)" \
    -n after --prepare "$(cold after)" "$(remote "$AFTER" after)"
else
  say "B10 skipped: a binary without libob-remote-execution.so, or the worker did not build"
fi
# Wall medians, and CPU seconds (user + sys, the binaries' and their
# compilers'; not the worker's): on a shared machine the CPU is the comparison.
echo "| | before | after | after / before | CPU before | CPU after | CPU after / before |"
echo "|---|---|---|---|---|---|---|"
for k in B1 B2 B5 B6 B6u B7 B10; do
  echo "| $k | $(ms "${M[$k/before]:-}") | $(ms "${M[$k/after]:-}") | $(ratio "${M[$k/after]:-}" "${M[$k/before]:-}") |" \
    "$(ms "${M[$k/before/cpu]:-}") | $(ms "${M[$k/after/cpu]:-}") | $(ratio "${M[$k/after/cpu]:-}" "${M[$k/before/cpu]:-}") |"
done
