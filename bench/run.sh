#!/usr/bin/env bash
# offload-build's benchmarks, B1..B10, measured side by side in one run and
# written to docs/BENCHMARKS.md (ccache and sccache, each with its cache warmed
# in the same run, in every comparison with a cache; sccache through one
# private server, its hit/miss/non-cacheable counts in the tables):
#   B1 cold build vs one-shot clang under make -j2
#   B2 clean rebuild with a warm cache vs one-shot clang, ccache and sccache
#   B3 Rust host-only edit: time, and how many device passes ran
#   B4 adding one target to a warm build (ccache and sccache: all miss)
#   B5 no-op build, vs make's no-op
#   B6 per-compile cost of a cache hit in launcher mode (offload-build clang ...)
#      vs a ccache hit and an sccache hit
#   B7 the CI case: a fresh clone at another path with a warm cache, vs one-shot
#      clang, ccache (with base_dir) and sccache
#   B8 the same for a CMake build through the launcher (fresh clone, fresh build
#      directory, links included), vs ccache and sccache as compiler launchers
#   B8b B8 with 50 plain TUs beside 10 offload ones, every compile through the
#      launcher, vs ccache (bench/b8b.sh, which also runs alone)
#   B9 a fresh clone with an empty local cache and a warm Redis / HTTP remote,
#      vs ccache and sccache on the same servers (bench/b9.sh, which also runs
#      alone; needs redis-server and nginx)
#   B10 remote execution: the 50-source, 3-target project cold through Bazel's
#      REAPI worker on loopback vs local, and a fresh clone served by the
#      engine's action cache vs Redis and the local cache (bench/b10.sh, which
#      also runs alone; skipped, with the reason, without the worker)
#   B11 Fortran through the launcher: a Jacobi-like project's cold build
#      (empty cache) and clean rebuild vs plain flang-22 under make -j2
#      (bench/b11.sh, which also runs alone)
#
# Usage: bench/run.sh [--reps N] [--quick] [--out FILE] [--keep]
#   --reps N   runs per cold/warm measurement (default 3; no-op and launcher
#              measurements use 10x as many)
#   --quick    1 run each, no 50-TU project, B9 on a 1x3 project: a smoke
#              test of the script (never for numbers to publish)
#   --out FILE where to write the report (default docs/BENCHMARKS.md)
#   --keep     keep the generated projects (their directory is printed)
# Needs hyperfine, make, ccache, python3 (scripts/setup.sh installs them) and
# LLVM 22; sccache when installed (its columns say "n/a" and why otherwise);
# builds offload-build (Release) into build-bench/ unless $OFFLOAD_BUILD names
# a binary. A nightly rustc is used for B3 when there is one.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3
QUICK=0
KEEP=0
OUT=$ROOT/docs/BENCHMARKS.md
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --quick) QUICK=1; REPS=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
FAST_REPS=$((REPS * 10))
JOBS=2  # the make -j2 of the comparison; offload-build gets the same -j

LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
CLANG=$LLVM_BIN/clang
for tool in hyperfine make ccache python3 "$CLANG"; do
  command -v "$tool" >/dev/null || { echo "bench: $tool not found; run scripts/setup.sh" >&2; exit 2; }
done

if [ -n "${OFFLOAD_BUILD:-}" ]; then
  OB=$OFFLOAD_BUILD
else
  echo "bench: building offload-build (Release) in build-bench/"
  cmake -S "$ROOT" -B "$ROOT/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DOFFLOAD_BUILD_TESTS=OFF >/dev/null
  cmake --build "$ROOT/build-bench" >/dev/null
  OB=$ROOT/build-bench/offload-build
fi

# Plain progress lines and no colors from every offload-build we time.
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup bench "$OB"
bench_stop_extra() { sc_stop; }
declare -A NOTE

# shellcheck source=bench/sccache.sh
source "$ROOT/bench/sccache.sh"
# One sccache server and cache for B2, B6, B7 and B8 (as each ccache column
# has its cache warmed in the same run); SC=0 when it cannot run.
SC=1
sc_start "$WORK/sccache" || { SC=0; say "sccache not compared: $SC_STATUS"; }
SC_WHY=$SC_STATUS
# sc_hf_args NAME [--prepare CMD] COMMAND: hyperfine arguments for an sccache
# command when the server runs, nothing otherwise.
sc_hf_args() { SC_ARGS=(); [ "$SC" = 1 ] && SC_ARGS=(-n "$@"); return 0; }
# sc_cell KEY: the time of an sccache measurement, or why there is none.
sc_cell() { if [ "$SC" = 1 ]; then ms "${M[$1]:-}"; else echo "n/a ($SC_WHY)"; fi; }
le() { awk -v a="${1:-}" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
verdict() { if "$@"; then echo "met"; else echo "**missed**"; fi; }

# Jobs that ran a command, from plain progress lines on stderr.
jobs_run() { grep -E '^\[[0-9]+/[0-9]+\] ' | grep -cvE '\((cached|up to date|fresh)\)$' || true; }
device_jobs_run() { grep -E '^\[[0-9]+/[0-9]+\] device ' | grep -cvE '\((cached|up to date|fresh)\)$' || true; }

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
T0=$SECONDS

# ---------------------------------------------------------------- projects
# name:TUs:targets
CONFIGS=("1x3:1:host,sm_90,gfx90a" "10x1:10:host" "10x3:10:host,sm_90,gfx90a" "50x1:50:host")
[ "$QUICK" = 1 ] && CONFIGS=("1x3:1:host,sm_90,gfx90a" "10x3:10:host,sm_90,gfx90a")
for cfg in "${CONFIGS[@]}"; do
  IFS=: read -r name tus targets <<<"$cfg"
  gen_c "$WORK/p$name" "$tus" "$targets"
done

# ---------------------------------------------------------------- B1, B2
for cfg in "${CONFIGS[@]}"; do
  IFS=: read -r name tus targets <<<"$cfg"
  p=$WORK/p$name c=$WORK/cache$name cc=$WORK/ccache$name
  ob="$OB -C $p --cache-dir $c -j$JOBS -q build"
  mk="make -C $p -f Makefile.oneshot -s -j$JOBS"
  say "B1 $name: cold build, $REPS run(s) each"
  hf "B1-$name" "$REPS" \
    -n oneshot --prepare "$mk clean" "$mk" \
    -n oneshot_lld --prepare "$mk clean" "$mk LINKER=-fuse-ld=lld" \
    -n ob --prepare "rm -rf $p/build $c" "$ob" \
    -n ob_inode --prepare "rm -rf $p/build $c" "env OFFLOAD_BUILD_STABLE_NAMES=0 $ob" \
    -n ob_nocache --prepare "rm -rf $p/build" "$OB -C $p --no-cache -j$JOBS -q build"
  say "B2 $name: clean rebuild, warm caches"
  # B1 left the cache as its last cold build (OFFLOAD_BUILD_STABLE_NAMES=0)
  # filled it: one build fills it as B2's runs use it, as ccache's is warmed.
  rm -rf "$p/build"; $ob
  CCACHE_DIR=$cc $mk clean >/dev/null
  CCACHE_DIR=$cc CCACHE_NOHASHDIR=1 $mk CC="ccache $CLANG" >/dev/null  # warm ccache
  CCACHE_DIR=$cc ccache -z >/dev/null
  sc_hf_args sccache --prepare "$mk clean" "$mk CC='sccache $CLANG'"
  if [ "$SC" = 1 ]; then $mk clean >/dev/null; $mk CC="sccache $CLANG" >/dev/null; sc_zero; fi  # warm sccache
  hf "B2-$name" "$REPS" \
    -n ccache --prepare "$mk clean" "CCACHE_DIR=$cc CCACHE_NOHASHDIR=1 $mk CC='ccache $CLANG'" \
    "${SC_ARGS[@]}" \
    -n ob --prepare "rm -rf $p/build" "$ob"
  if [ "$SC" = 1 ]; then NOTE[sccache-$name]=$(sc_stats "$REPS"); fi
  NOTE[ccache-$name]=$(CCACHE_DIR=$cc ccache --print-stats 2>/dev/null |
    awk -F'\t' -v n="$REPS" '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m+=$2} END{printf "%d hits, %d misses in %d builds", h, m, n}')
  rm -rf "$p/build"
  NOTE[ob-warm-run-$name]=$($OB -C "$p" --cache-dir "$c" -j$JOBS build 2>&1 | jobs_run)
done

# Where the time goes: one cold and one warm build of the last project, with --report.
last=${CONFIGS[-1]%%:*}
pl=$WORK/p$last cl=$WORK/breakdown-cache
rm -rf "$pl/build" "$cl"
$OB -C "$pl" --cache-dir "$cl" -j$JOBS -q --report "$WORK/cold.json" build
rm -rf "$pl/build"
$OB -C "$pl" --cache-dir "$cl" -j$JOBS -q --report "$WORK/warm.json" build

# ---------------------------------------------------------------- B3 (Rust)
B3_STATUS="not run"
rs=$WORK/rust rc=$WORK/cache-rust
gen_rust "$rs"
say "B3: Rust crate, cold build"
if cold_out=$($OB -C "$rs" --cache-dir "$rc" -j$JOBS build 2>&1); then
  B3_STATUS=ok
  M[B3/cold]=$(awk '/jobs:.* run in / { for (i = 1; i <= NF; i++) if ($i == "in") print $(i + 1) }' <<<"$cold_out" | tail -1)
  say "B3: host-only edits, $REPS run(s); then a kernel edit for comparison"
  hf B3 "$REPS" \
    -n host_edit --prepare "echo '// edit '\$(date +%s%N) >> $rs/src/host.rs" "$OB -C $rs --cache-dir $rc -j$JOBS -q build"
  echo "// one more edit $(date +%s%N)" >>"$rs/src/host.rs"
  B3_DEVICE=$($OB -C "$rs" --cache-dir "$rc" -j$JOBS build 2>&1 | device_jobs_run)
  hf B3k "$REPS" \
    -n kernel_edit --prepare "sed -i \"s/let _edit: u64 = [0-9]*;/let _edit: u64 = \$(date +%s%N);/\" $rs/src/main.rs" \
    "$OB -C $rs --cache-dir $rc -j$JOBS -q build"
  # The cargo flow (issue 53): a no-op and a host-only edit of examples/rust-cargo
  # against plain cargo running the host pass's own command (the same crates,
  # flags and fat LTO: what `cargo build` costs these crates without offload-build).
  cg=$WORK/rust-cargo cgc=$WORK/cache-cargo
  rm -rf "$cg" && cp -a "$ROOT/examples/rust-cargo" "$cg" && rm -rf "$cg/target"
  if $OB -C "$cg" --cache-dir "$cgc" -q cargo build >/dev/null 2>&1; then
    host_cmd=$($OB -C "$cg" --cache-dir "$cgc" -v cargo build 2>&1 | grep -E "^(env |RUSTC=).* build " | tail -1)
    printf '#!/usr/bin/env bash\ncd %q\n%s -q\n' "$cg" "$host_cmd" >"$WORK/plain-cargo.sh"
    say "B3c: cargo no-op and host-only edit, $REPS run(s), against plain cargo"
    hf B3c "$REPS" -n ob_noop "$OB -C $cg --cache-dir $cgc -q cargo build" -n cargo_noop "bash $WORK/plain-cargo.sh"
    edit="echo '// edit '\$(date +%s%N) >> $cg/src/main.rs"
    hf B3e "$REPS" -n ob_edit --prepare "$edit" "$OB -C $cg --cache-dir $cgc -q cargo build" \
      -n cargo_edit --prepare "$edit" "bash $WORK/plain-cargo.sh"
    B3C_STATUS=ok
  else
    B3C_STATUS="not available: the cargo flow did not build examples/rust-cargo"
  fi
else
  B3_STATUS="not available: $(tail -3 <<<"$cold_out" | tr '\n' ' ')"
  say "B3 skipped: $B3_STATUS"
fi

# ---------------------------------------------------------------- B4
p4=$WORK/p4 c4=$WORK/cache4 cc4=$WORK/ccache4
gen_c "$p4" 10 host,sm_90
gen_makefile "$p4" host,sm_90,gfx90a Makefile.three oneshot
say "B4: 10 TUs built for host,sm_90, then gfx90a added"
$OB -C "$p4" --cache-dir "$c4" -j$JOBS -q --target host --target sm_90 build
cp -a "$c4" "$c4.snap"; cp -a "$p4/build" "$p4/build.snap"
CCACHE_DIR=$cc4 CCACHE_NOHASHDIR=1 make -C "$p4" -f Makefile.oneshot -s -j$JOBS CC="ccache $CLANG" >/dev/null
cp -a "$cc4" "$cc4.snap"
add3="$OB -C $p4 --cache-dir $c4 -j$JOBS -q --target host --target sm_90 --target gfx90a build"
mk3="make -C $p4 -f Makefile.three -s -j$JOBS"
# sccache: a new SCCACHE_C_CUSTOM_CACHE_BUSTER each run makes every lookup a
# real miss, as the changed command line does for ccache.
sc_hf_args sccache --prepare "$mk3 clean" "SCCACHE_C_CUSTOM_CACHE_BUSTER=\$(date +%s%N) $mk3 CC='sccache $CLANG'"
if [ "$SC" = 1 ]; then sc_zero; fi
hf B4 "$REPS" \
  -n ob --prepare "rm -rf $c4 $p4/build && cp -a $c4.snap $c4 && cp -a $p4/build.snap $p4/build" "$add3" \
  -n oneshot --prepare "$mk3 clean" "$mk3" \
  -n ccache --prepare "$mk3 clean && rm -rf $cc4 && cp -a $cc4.snap $cc4" "CCACHE_DIR=$cc4 CCACHE_NOHASHDIR=1 $mk3 CC='ccache $CLANG'" \
  "${SC_ARGS[@]}"
if [ "$SC" = 1 ]; then NOTE[sccache-B4]=$(sc_stats "$REPS"); fi
rm -rf "$c4" "$p4/build" && cp -a "$c4.snap" "$c4" && cp -a "$p4/build.snap" "$p4/build"
B4_OUT=$($OB -C "$p4" --cache-dir "$c4" -j$JOBS --target host --target sm_90 --target gfx90a build 2>&1)
B4_RUN=$(jobs_run <<<"$B4_OUT")
B4_TOTAL=$(grep -oE '^offload-build: [0-9]+ jobs' <<<"$B4_OUT" | grep -oE '[0-9]+' | head -1)

# ---------------------------------------------------------------- B5
big=50x1
[ "$QUICK" = 1 ] && big=10x3
p5=$WORK/p$big
say "B5: no-op build of the $big project, $FAST_REPS runs"
$OB -C "$p5" --cache-dir "$WORK/cache$big" -q build
make -C "$p5" -f Makefile.oneshot -s -j$JOBS
hf B5 "$FAST_REPS" --warmup 3 -N \
  -n ob "$OB -C $p5 --cache-dir $WORK/cache$big -q build" \
  -n make "make -C $p5 -f Makefile.oneshot -s -j$JOBS"
B5_JOBS=$($OB -C "$p5" --cache-dir "$WORK/cache$big" build 2>&1 | grep -oE '^offload-build: [0-9]+ jobs.*' |
  sed -E 's/^offload-build: //; s/ in [0-9.]+ s$//' || true)

# ---------------------------------------------------------------- B6
p6=$WORK/p10x3
B6_STATUS=ok
flags=$(oneshot_flags host,sm_90,gfx90a)
one="$CLANG $flags -O2 -c $p6/src/tu_0.c -o $WORK/b6.o"
OFFLOAD_BUILD_CACHE_DIR=$WORK/cache-b6 $OB $one >/dev/null 2>&1 || true
b6_explain=$(OFFLOAD_BUILD_EXPLAIN=1 OFFLOAD_BUILD_CACHE_DIR=$WORK/cache-b6 $OB $one 2>&1 || true)
if grep -q ': hit' <<<"$b6_explain"; then
  say "B6: launcher-mode cache hits, $FAST_REPS runs"
  CCACHE_DIR=$WORK/ccache-b6 ccache $one
  sc_hf_args sccache "sccache $one"
  if [ "$SC" = 1 ]; then sccache $one; sc_zero; fi
  OFFLOAD_BUILD_CACHE_DIR=$WORK/cache-b6 CCACHE_DIR=$WORK/ccache-b6 hf B6 "$FAST_REPS" --warmup 3 -N \
    -n ob "$OB $one" \
    -n ccache "ccache $one" \
    "${SC_ARGS[@]}" \
    -n clang "$one"
  if [ "$SC" = 1 ]; then NOTE[sccache-B6]=$(sc_stats $((FAST_REPS + 3)) | sed 's/ builds$/ compiles (3 warm-up runs included)/'); fi
  say "B6: launcher-mode cold compiles (empty cache), $REPS runs"
  hf B6cold "$REPS" -N \
    -n ob --prepare "rm -rf $WORK/cache-b6cold" "env OFFLOAD_BUILD_CACHE_DIR=$WORK/cache-b6cold $OB $one" \
    -n clang "$one"
else
  B6_STATUS="not available: \`offload-build $CLANG ...\` did not serve a cache hit (launcher mode missing?)"
  say "B6 skipped: $B6_STATUS"
fi

# ---------------------------------------------------------------- B7
# A fresh copy of the project at a new path (new inodes, new directory) each
# run, built with the cache the earlier builds of the original filled.
B7_CONFIGS=()
for cfg in "${CONFIGS[@]}"; do
  case $cfg in 10x3:*|50x1:*) B7_CONFIGS+=("$cfg") ;; esac
done
for cfg in "${B7_CONFIGS[@]}"; do
  IFS=: read -r name tus targets <<<"$cfg"
  p=$WORK/p$name c=$WORK/cache$name cc=$WORK/ccache$name clone=$WORK/clone/p$name
  fresh="rm -rf $WORK/clone && mkdir -p $WORK/clone && cp -r $p $clone && rm -rf $clone/build $clone/oneshot"
  say "B7 $name: fresh clone at another path, warm caches"
  sc_hf_args sccache --prepare "$fresh" "make -C $clone -f Makefile.oneshot -s -j$JOBS CC='sccache $CLANG'"
  if [ "$SC" = 1 ]; then sc_zero; fi
  hf "B7-$name" "$REPS" \
    -n ob --prepare "$fresh" "$OB -C $clone --cache-dir $c -j$JOBS -q build" \
    -n ccache --prepare "$fresh" \
    "CCACHE_DIR=$cc CCACHE_BASEDIR=$WORK CCACHE_NOHASHDIR=1 make -C $clone -f Makefile.oneshot -s -j$JOBS CC='ccache $CLANG'" \
    "${SC_ARGS[@]}"
  if [ "$SC" = 1 ]; then NOTE[B7-sccache-$name]=$(sc_stats "$REPS"); fi
  eval "$fresh"
  NOTE[B7-run-$name]=$($OB -C "$clone" --cache-dir "$c" -j$JOBS build 2>&1 | jobs_run)
done

# ---------------------------------------------------------------- B8
# CMake through the installed package (compiler and linker launcher) in a
# fresh clone and build directory, the cache warm from the first checkout.
B8_STATUS=ok
pre=$WORK/prefix
if cmake --install "$(dirname "$OB")" --prefix "$pre" >/dev/null 2>&1 && [ -x "$pre/bin/offload-build" ]; then
  b8=$WORK/b8 c8=$WORK/cache8 cc8=$WORK/ccache8
  mkdir -p "$b8/co1"
  cp -r "$WORK/p10x3" "$b8/co1/proj"
  rm -rf "$b8/co1/proj/build" "$b8/co1/proj/oneshot"
  gen_cmake "$b8/co1/proj" host,sm_90,gfx90a
  # cfg8 CHECKOUT LAUNCHER: configure CHECKOUT/proj into CHECKOUT/build.
  cfg8() {
    echo "cmake -S $1/proj -B $1/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=$CLANG -DCMAKE_PREFIX_PATH=$pre -DLAUNCHER=$2 >/dev/null"
  }
  fresh8() { echo "rm -rf $b8/co2 && mkdir -p $b8/co2 && cp -r $b8/co1/proj $b8/co2/proj && $(cfg8 "$b8/co2" "$1")"; }
  say "B8: warming the caches from a first checkout"
  eval "$(cfg8 "$b8/co1" offload-build)"
  OFFLOAD_BUILD_CACHE_DIR=$c8 OFFLOAD_BUILD_BASE_DIR=$b8/co1 cmake --build "$b8/co1/build" >/dev/null
  rm -rf "$b8/co1/build"
  eval "$(cfg8 "$b8/co1" ccache)"
  CCACHE_DIR=$cc8 CCACHE_BASEDIR=$b8/co1 CCACHE_NOHASHDIR=1 cmake --build "$b8/co1/build" >/dev/null
  sc_hf_args sccache --prepare "$(fresh8 sccache)" "cmake --build $b8/co2/build"
  if [ "$SC" = 1 ]; then
    rm -rf "$b8/co1/build"
    eval "$(cfg8 "$b8/co1" sccache)"
    cmake --build "$b8/co1/build" >/dev/null
    sc_zero
  fi
  ob8="env OFFLOAD_BUILD_CACHE_DIR=$c8 OFFLOAD_BUILD_BASE_DIR=$b8/co2"
  say "B8: fresh clone and build directory, $REPS run(s) each"
  hf B8 "$REPS" \
    -n ob --prepare "$(fresh8 offload-build)" "$ob8 cmake --build $b8/co2/build" \
    -n ccache --prepare "$(fresh8 ccache)" "env CCACHE_DIR=$cc8 CCACHE_BASEDIR=$b8/co2 CCACHE_NOHASHDIR=1 cmake --build $b8/co2/build" \
    -n oneshot --prepare "$(fresh8 none)" "cmake --build $b8/co2/build" \
    "${SC_ARGS[@]}"
  if [ "$SC" = 1 ]; then NOTE[sccache-B8]=$(sc_stats "$REPS"); fi
  eval "$(fresh8 offload-build)"
  B8_EXPLAIN=$($ob8 OFFLOAD_BUILD_EXPLAIN=1 cmake --build "$b8/co2/build" 2>&1 || true)
  B8_HITS=$(grep -c ': hit$' <<<"$B8_EXPLAIN" || true)
  B8_MISSES=$(grep -c ': miss: ' <<<"$B8_EXPLAIN" || true)
else
  B8_STATUS="not available: \`cmake --install\` of offload-build failed"
  say "B8 skipped: $B8_STATUS"
fi

# ---------------------------------------------------------------- B8b
say "B8b: CMake with 50 plain and 10 offload TUs (bench/b8b.sh)"
b8b_args=(--reps "$REPS")
[ "$QUICK" = 1 ] && b8b_args+=(--plain 10 --offload 2 --targets host)
if ! OFFLOAD_BUILD=$OB "$ROOT/bench/b8b.sh" "${b8b_args[@]}" --section "$WORK/b8b.md" >>"$LOG" 2>&1; then
  printf '## B8b: CMake with plain compiles\n\nnot run: bench/b8b.sh failed (%s)\n' "$(tail -1 "$LOG")" >"$WORK/b8b.md"
fi

# ---------------------------------------------------------------- B9
say "B9: remote storage (bench/b9.sh)"
b9_args=(--reps "$REPS")
[ "$QUICK" = 1 ] && b9_args=(--quick)
if ! OFFLOAD_BUILD=$OB "$ROOT/bench/b9.sh" "${b9_args[@]}" --section "$WORK/b9.md" >>"$LOG" 2>&1; then
  printf '## B9: remote storage\n\nnot run: bench/b9.sh failed (%s)\n' "$(tail -1 "$LOG")" >"$WORK/b9.md"
fi

# ---------------------------------------------------------------- B10
say "B10: remote execution (bench/b10.sh)"
b10_args=(--reps "$REPS")
[ "$QUICK" = 1 ] && b10_args=(--quick)
if ! OFFLOAD_BUILD=$OB "$ROOT/bench/b10.sh" "${b10_args[@]}" --section "$WORK/b10.md" >>"$LOG" 2>&1; then
  printf '## B10: remote execution on a REAPI engine\n\nnot run: bench/b10.sh failed (%s)\n' "$(tail -1 "$LOG")" >"$WORK/b10.md"
fi

# ---------------------------------------------------------------- B11
say "B11: Fortran through the launcher (bench/b11.sh)"
b11_args=(--reps "$REPS")
[ "$QUICK" = 1 ] && b11_args=(--reps 1 --modules 2)
if ! OFFLOAD_BUILD=$OB "$ROOT/bench/b11.sh" "${b11_args[@]}" --section "$WORK/b11.md" >>"$LOG" 2>&1; then
  printf '## B11: Fortran through the launcher\n\nnot run: bench/b11.sh failed (%s)\n' "$(tail -1 "$LOG")" >"$WORK/b11.md"
fi

# ---------------------------------------------------------------- LLVM 19
say "B1/B2 with LLVM 19's generic kernels beside LLVM 22's bare ones (bench/llvm_versions.sh)"
lv_args=(--reps "$REPS")
[ "$QUICK" = 1 ] && lv_args=(--reps 1 --tus 2)
if ! OFFLOAD_BUILD=$OB "$ROOT/bench/llvm_versions.sh" "${lv_args[@]}" --section "$WORK/llvm.md" >>"$LOG" 2>&1; then
  printf '## LLVM 19 generic kernels beside LLVM 22 bare kernels\n\nnot run: bench/llvm_versions.sh failed (%s)\n' "$(tail -1 "$LOG")" >"$WORK/llvm.md"
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$((SECONDS - T0))

# ---------------------------------------------------------------- report
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
llvm=$($CLANG --version | head -1)
rustv=$(rustup run nightly rustc --version 2>/dev/null || echo "none")
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit + uncommitted changes"

{
  echo "# Benchmarks"
  echo
  echo "Written by \`bench/run.sh\` (one command; \`--help\` for options) on $STARTED,"
  echo "in ${ELAPSED} s. Every number is the **median** of the runs given, measured by"
  echo "[hyperfine](https://github.com/sharkdp/hyperfine) in this one run, side by"
  echo "side. Ratios are offload-build's time divided by the other's (below 1 is"
  echo "faster); speedups the other way round."
  echo
  echo "## Machine"
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| CPU | $cpu, $(nproc) cores (\`nproc\`) |"
  echo "| memory | $mem |"
  echo "| LLVM | $llvm |"
  echo "| rustc nightly | $rustv |"
  echo "| ccache | $(ccache --version | head -1) |"
  echo "| sccache | $(sccache --version 2>/dev/null || echo "not installed"), local disk cache, server started by the script$([ "$SC" = 1 ] || echo ": not compared ($SC_WHY)") |"
  echo "| hyperfine | $(hyperfine --version) |"
  if [ -n "${OFFLOAD_BUILD:-}" ]; then ob_build="\`OFFLOAD_BUILD=$OFFLOAD_BUILD\`"; else ob_build="Release build"; fi
  echo "| offload-build | $($OB --version) ($commit), $ob_build |"
  echo "| load average | $LOAD_START at start, $LOAD_END at end |"
  echo "| runs | $REPS per build measurement, $FAST_REPS for no-op and launcher hits |"
  echo
  echo "Projects are generated (\`bench/gen.sh\`): N C translation units, each with one"
  echo "\`ompx_bare\` kernel (so sm_90 and gfx90a build with Debian's LLVM 22, which has"
  echo "no OpenMP GPU device runtime) and some host code using libc and libm; \`NxT\` means"
  echo "N TUs and T targets (1: host; 3: host, sm_90, gfx90a). One-shot clang is a"
  echo "generated Makefile running \`clang -fopenmp -fopenmp-targets=... -c\` per TU and"
  echo "one link, under \`make -j$JOBS\`; offload-build runs with \`-j$JOBS\`."
  echo
  echo "## B1: cold build (empty cache, no build directory)"
  echo
  echo "offload-build links with \`ld.lld\` by default (\"linker\": \"lld\"); plain clang links"
  echo "with GNU ld. The last column compares with one-shot clang given \`-fuse-ld=lld\` too."
  echo
  echo "| project | one-shot clang, make -j$JOBS | offload-build | ratio | target | | offload-build --no-cache (for reference) | one-shot clang -fuse-ld=lld: time, ratio | stable kernel names' cost: vs OFFLOAD_BUILD_STABLE_NAMES=0 (target <= 1.03x) |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for cfg in "${CONFIGS[@]}"; do
    IFS=: read -r name tus targets <<<"$cfg"
    a=${M[B1-$name/ob]:-} b=${M[B1-$name/oneshot]:-}
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) print a / b }')
    if [ "$tus" = 1 ]; then tgt="<= 0.7x"; lim=0.7; else tgt="<= 1.0x"; lim=1.0; fi
    l=${M[B1-$name/oneshot_lld]:-}
    i=${M[B1-$name/ob_inode]:-}
    ri=$(awk -v a="$a" -v b="$i" 'BEGIN { if (b > 0) print a / b }')
    echo "| $name | $(ms "$b") | $(ms "$a") | $(ratio "$a" "$b") | $tgt | $(verdict le "$r" $lim) | $(ms "${M[B1-$name/ob_nocache]:-}") ($(ratio "${M[B1-$name/ob_nocache]:-}" "$b")) | $(ms "$l"), $(ratio "$a" "$l") | $(ms "$i"), $(ratio "$a" "$i") $(verdict le "$ri" 1.03) |"
  done
  echo
  echo "## B2: clean rebuild with a warm cache (build directory removed)"
  echo
  echo "sccache + clang: the same Makefile with \`CC='sccache clang'\`, its cache warmed by one build"
  echo "just before (one private server for the whole run). The target is the issue's (ccache);"
  echo "the sccache columns are for comparison. The hit counts are each tool's own, over the timed builds."
  echo
  echo "| project | one-shot clang | ccache + clang | sccache + clang | offload-build | vs one-shot | vs ccache | vs sccache | target: >= 10x one-shot, faster than ccache | what the caches did |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for cfg in "${CONFIGS[@]}"; do
    IFS=: read -r name tus targets <<<"$cfg"
    a=${M[B2-$name/ob]:-} b=${M[B1-$name/oneshot]:-} cc=${M[B2-$name/ccache]:-}
    s=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) print b / a }')
    ok() { awk -v s="$s" -v a="$a" -v c="$cc" 'BEGIN { exit !(s >= 10 && a < c) }'; }
    sc=${M[B2-$name/sccache]:-}
    echo "| $name | $(ms "$b") | $(ms "$cc") | $(sc_cell "B2-$name/sccache") | $(ms "$a") | $(speedup "$b" "$a") | $(speedup "$cc" "$a") | $(speedup "$sc" "$a") | $(verdict ok) | ccache: ${NOTE[ccache-$name]}; sccache: ${NOTE[sccache-$name]:-not run}; offload-build: ${NOTE[ob-warm-run-$name]} commands run |"
  done
  echo
  echo "## B3: Rust, host-only edit"
  echo
  if [ "$B3_STATUS" = ok ]; then
    echo "A crate whose host-only code is a module (\`#[cfg(not(offload_device))] mod host;\`);"
    echo "each run appends a comment to \`src/host.rs\`. For comparison, an edit inside the kernel."
    echo
    echo "| case | time | device passes run | target | |"
    echo "|---|---|---|---|---|"
    echo "| cold build | ${M[B3/cold]:-n/a} s | 1 | | |"
    echo "| host-only edit | $(ms "${M[B3/host_edit]:-}") | $B3_DEVICE | 0 device passes | $(verdict test "$B3_DEVICE" = 0) |"
    echo "| kernel edit | $(ms "${M[B3k/kernel_edit]:-}") | 1 | | |"
    echo
    echo "Most of a Rust rebuild is the host pass, which links with fat LTO of std; the device"
    echo "pass of this crate is small, so skipping it saves little time here, but no device pass runs."
    echo
    if [ "${B3C_STATUS:-}" = ok ]; then
      echo "The cargo flow, examples/rust-cargo (CPU s, user + sys; plain cargo runs the host pass's own"
      echo "command: the same crates and flags, fat LTO, no device pass):"
      echo
      echo "| case | offload-build cargo | plain cargo | ratio (CPU) | target | |"
      echo "|---|---|---|---|---|---|"
      n_ob=${M[B3c/ob_noop/cpu]:-} n_pl=${M[B3c/cargo_noop/cpu]:-} e_ob=${M[B3e/ob_edit/cpu]:-} e_pl=${M[B3e/cargo_edit/cpu]:-}
      echo "| no-op | ${n_ob:-n/a} s | ${n_pl:-n/a} s | $(ratio "$n_ob" "$n_pl") | <= 2.5x | $(verdict awk -v a="$n_ob" -v b="$n_pl" 'BEGIN { exit !(b > 0 && a / b <= 2.5) }') |"
      echo "| host-only edit | ${e_ob:-n/a} s | ${e_pl:-n/a} s | $(ratio "$e_ob" "$e_pl") | <= 1.3x | $(verdict awk -v a="$e_ob" -v b="$e_pl" 'BEGIN { exit !(b > 0 && a / b <= 1.3) }') |"
    else
      echo "cargo flow: ${B3C_STATUS:-not run}"
    fi
  else
    echo "$B3_STATUS"
  fi
  echo
  echo "## B4: add one target (gfx90a) to a warm 10-TU build for host and sm_90"
  echo
  echo "| | time | commands run | ratio offload-build / this |"
  echo "|---|---|---|---|"
  echo "| offload-build | $(ms "${M[B4/ob]:-}") | $B4_RUN of $B4_TOTAL jobs | |"
  echo "| one-shot clang (recompiles every TU for 3 targets) | $(ms "${M[B4/oneshot]:-}") | all | $(ratio "${M[B4/ob]:-}" "${M[B4/oneshot]:-}") |"
  echo "| ccache + clang (every compile's command line changed: all miss) | $(ms "${M[B4/ccache]:-}") | all | $(ratio "${M[B4/ob]:-}" "${M[B4/ccache]:-}") |"
  echo "| sccache + clang (all miss: a new \`SCCACHE_C_CUSTOM_CACHE_BUSTER\` each run; ${NOTE[sccache-B4]:-not run}) | $(sc_cell B4/sccache) | all | $(ratio "${M[B4/ob]:-}" "${M[B4/sccache]:-}") |"
  echo
  echo "## B5: no-op build ($big project)"
  echo
  r5=$(awk -v a="${M[B5/ob]:-}" -v b="${M[B5/make]:-}" 'BEGIN { if (b > 0) print a / b }')
  echo "Two goals: the issue's, within 2x of make's own no-op on the one-shot Makefile"
  echo "(ratio <= 2.0x), and under 30 ms."
  echo
  echo "| | time | ratio offload-build / make | goal | | goal | |"
  echo "|---|---|---|---|---|---|---|"
  echo "| offload-build ($B5_JOBS) | $(ms "${M[B5/ob]:-}") | $(ratio "${M[B5/ob]:-}" "${M[B5/make]:-}") | <= 2.0x make | $(verdict le "$r5" 2.0) | < 30 ms | $(verdict le "${M[B5/ob]:-}" 0.030) |"
  echo "| make -j$JOBS on the one-shot Makefile | $(ms "${M[B5/make]:-}") | | | | | |"
  echo
  echo "## B6: a cache hit in launcher mode, per compile"
  echo
  if [ "$B6_STATUS" = ok ]; then
    echo "\`offload-build $CLANG <3-target flags> -O2 -c tu_0.c -o tu_0.o\` with the result"
    echo "in the cache (what a CMake \`CMAKE_C_COMPILER_LAUNCHER=offload-build\` build pays"
    echo "per unchanged TU), against a ccache hit, an sccache hit (its server running, as in a"
    echo "build) and the compile itself. Two goals: the issue's, no slower than a ccache hit"
    echo "(ratio <= 1.0x), and under 10 ms. The hit is the compile's whole entry (the object,"
    echo "its depfile and warnings under the command line and every file its split read:"
    echo "[CACHE.md](CACHE.md#keys-two-levels-like-ccaches-direct-mode)), as a ccache hit is."
    echo
    r6=$(awk -v a="${M[B6/ob]:-}" -v b="${M[B6/ccache]:-}" 'BEGIN { if (b > 0) print a / b }')
    echo "| | time | ratio offload-build / this | goal | | goal | |"
    echo "|---|---|---|---|---|---|---|"
    echo "| offload-build launcher, cache hit | $(ms "${M[B6/ob]:-}") | | | | < 10 ms | $(verdict le "${M[B6/ob]:-}" 0.010) |"
    echo "| ccache, cache hit | $(ms "${M[B6/ccache]:-}") | $(ratio "${M[B6/ob]:-}" "${M[B6/ccache]:-}") | <= 1.0x | $(verdict le "$r6" 1.0) | | |"
    r6c=$(awk -v a="${M[B6/ob/cpu]:-}" -v b="${M[B6/ccache/cpu]:-}" 'BEGIN { if (b > 0) print a / b }')
    echo "| the same in CPU (user + sys): offload-build $(ms "${M[B6/ob/cpu]:-}"), ccache | $(ms "${M[B6/ccache/cpu]:-}") | $(ratio "${M[B6/ob/cpu]:-}" "${M[B6/ccache/cpu]:-}") | <= 1.0x | $(verdict le "$r6c" 1.0) | | |"
    echo "| sccache, cache hit (${NOTE[sccache-B6]:-not run}) | $(sc_cell B6/sccache) | $(ratio "${M[B6/ob]:-}" "${M[B6/sccache]:-}") | | | | |"
    echo "| clang, the compile | $(ms "${M[B6/clang]:-}") | $(ratio "${M[B6/ob]:-}" "${M[B6/clang]:-}") | | | | |"
    echo
    echo "The same compile with an empty cache (for reference; no target): offload-build asks the"
    echo "driver for its device commands (one \`-###\` per target, in parallel), then runs one host"
    echo "parse, the three device passes in parallel, package and host codegen, storing each."
    echo
    echo "| | time | ratio |"
    echo "|---|---|---|"
    echo "| offload-build launcher, cold | $(ms "${M[B6cold/ob]:-}") | $(ratio "${M[B6cold/ob]:-}" "${M[B6cold/clang]:-}") |"
    echo "| clang, the compile | $(ms "${M[B6cold/clang]:-}") | |"
  else
    echo "$B6_STATUS"
  fi
  echo
  echo "## B7: the CI case: a fresh clone at another path, warm cache"
  echo
  echo "Each run copies the project to a new directory (new inodes, new path) and builds it"
  echo "with the cache the original's builds filled: what a CI runner restoring its cache does."
  echo "ccache runs with \`CCACHE_BASEDIR\` so that it hits across paths too; sccache $(sccache --version 2>/dev/null | grep -oE '[0-9][^ ]*$' || true)"
  echo "has no such setting and runs as it is, with the cache B2 warmed (its hits and misses say"
  echo "what a new path costs it)."
  echo
  echo "| project | one-shot clang (cold) | ccache + clang, base_dir | sccache + clang | offload-build | vs one-shot | vs ccache | vs sccache | commands run | target: >= 10x one-shot, faster than ccache, 0 commands | sccache did |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for cfg in "${B7_CONFIGS[@]}"; do
    IFS=: read -r name tus targets <<<"$cfg"
    a=${M[B7-$name/ob]:-} b=${M[B1-$name/oneshot]:-} cc=${M[B7-$name/ccache]:-} n=${NOTE[B7-run-$name]:-}
    s=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) print b / a }')
    ok7() { awk -v s="$s" -v a="$a" -v c="$cc" -v n="$n" 'BEGIN { exit !(s >= 10 && a < c && n == 0) }'; }
    echo "| $name | $(ms "$b") | $(ms "$cc") | $(sc_cell "B7-$name/sccache") | $(ms "$a") | $(speedup "$b" "$a") | $(speedup "$cc" "$a") | $(speedup "${M[B7-$name/sccache]:-}" "$a") | $n | $(verdict ok7) | ${NOTE[B7-sccache-$name]:-not run} |"
  done
  echo
  echo "## B8: CMake through the launcher: fresh clone, fresh build directory, warm cache"
  echo
  if [ "$B8_STATUS" = ok ]; then
    echo "The 10x3 project as a CMake project (\`gen_cmake\` in \`bench/gen.sh\`), configured (not timed)"
    echo "in a fresh copy at another path and built with Ninja. offload-build: the installed CMake"
    echo "package (compiler and linker launcher, \`OFFLOAD_BUILD_BASE_DIR\` the checkout); ccache: the"
    echo "same offload flags with \`C_COMPILER_LAUNCHER=ccache\` and \`CCACHE_BASEDIR\`; both caches warm"
    echo "from a first checkout at another path. sccache: \`C_COMPILER_LAUNCHER=sccache\`, no base_dir"
    echo "setting in sccache, its cache warmed from the first checkout too. The link is included"
    echo "(offload-build caches it; ccache and sccache cannot)."
    echo
    r8=$(awk -v a="${M[B8/ob]:-}" -v b="${M[B8/ccache]:-}" 'BEGIN { if (b > 0) print a / b }')
    echo "| | time | ratio offload-build / this | target | |"
    echo "|---|---|---|---|---|"
    echo "| offload-build launcher ($B8_HITS jobs served, $B8_MISSES run) | $(ms "${M[B8/ob]:-}") | | 0 run | $(verdict test "$B8_MISSES" = 0) |"
    echo "| ccache launcher | $(ms "${M[B8/ccache]:-}") | $(ratio "${M[B8/ob]:-}" "${M[B8/ccache]:-}") | < 1.0x | $(verdict le "$r8" 0.9999) |"
    echo "| sccache launcher (${NOTE[sccache-B8]:-not run}) | $(sc_cell B8/sccache) | $(ratio "${M[B8/ob]:-}" "${M[B8/sccache]:-}") | | |"
    echo "| no launcher (clang, cold) | $(ms "${M[B8/oneshot]:-}") | $(ratio "${M[B8/ob]:-}" "${M[B8/oneshot]:-}") | | |"
  else
    echo "$B8_STATUS"
  fi
  echo
  cat "$WORK/b8b.md"
  echo
  cat "$WORK/b9.md"
  echo
  cat "$WORK/b10.md"
  echo
  cat "$WORK/b11.md"
  echo
  cat "$WORK/llvm.md"
  echo
  echo "## Where the time goes ($last, one cold and one warm build, from \`--report\`)"
  echo
  if command -v python3 >/dev/null; then
    python3 - "$WORK/cold.json" "$WORK/warm.json" <<'PY'
import json, sys
kinds = ("host-ir", "device", "assemble", "package", "host", "link")
print("| build | wall | " + " | ".join(kinds) + " | slowest job |")
print("|---|---|" + "---|" * len(kinds) + "---|")
for name, path in (("cold", sys.argv[1]), ("warm", sys.argv[2])):
    r = json.load(open(path))
    sums = {}
    for j in r["jobs"]:
        sums[j["kind"]] = sums.get(j["kind"], 0.0) + (j["duration_s"] or 0.0)
    slow = max(r["jobs"], key=lambda j: j["duration_s"] or 0.0)
    cells = " | ".join("%.2f s" % sums.get(k, 0.0) for k in kinds)
    print("| %s | %.2f s | %s | %s (%s): %.2f s |" % (name, r["duration_s"], cells, slow["description"],
                                                   slow["status"], slow["duration_s"] or 0.0))
print()
print("Per kind: the sum of the jobs' wall times (jobs overlap under -j%s, so the sum can exceed the wall time);" % "2")
print("a cached job's time is the cache lookup and restore.")
PY
  else
    echo "(python3 not found: no breakdown)"
  fi
  echo
  echo "## Notes"
  echo
  if [ -f "$ROOT/bench/NOTES.md" ]; then cat "$ROOT/bench/NOTES.md"; fi
  # Sections measured once, by hand (before/after figures): kept as written.
  if [ -f "$ROOT/bench/HISTORY.md" ]; then echo; cat "$ROOT/bench/HISTORY.md"; fi
} >"$OUT"

say "wrote $OUT (${ELAPSED} s); hyperfine's log: $LOG"
[ "$KEEP" = 1 ] && cp "$LOG" "$WORK/../ob-bench-hyperfine.log" 2>/dev/null || true
