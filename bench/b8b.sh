#!/usr/bin/env bash
# B8b: B8 with plain compiles (issue #52, item 5). A CMake project of NPLAIN
# plain C TUs (a static library, no OpenMP) and NOFFLOAD offload TUs (the
# executable), every compile through the launcher, built in a fresh clone and
# a fresh build directory with the cache warm from a first checkout:
# offload-build (the CMake package: every plain compile cached whole, the
# offload ones split) against ccache as the compiler launcher, and with no
# launcher (cold). Also the first build (cold caches) of each launcher.
#
# Usage: bench/b8b.sh [--reps N] [--plain N] [--offload N] [--targets T]
#                     [--ob BINARY] [--out FILE] [--section FILE]
#   --plain N, --offload N  the project's size (default 50 and 10)
#   --targets T             the offload TUs' targets (default host,sm_90,gfx90a)
#   --out FILE              replace (or add) the "## B8b" section of FILE
#                           (default docs/BENCHMARKS.md)
#   --section FILE          write only the section to FILE
# Needs hyperfine, cmake, ninja, ccache and LLVM 22; installs BINARY's build
# (default build/offload-build) into a private prefix.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3
NPLAIN=50
NOFFLOAD=10
TARGETS=host,sm_90,gfx90a
OB=${OFFLOAD_BUILD:-$ROOT/build/offload-build}
OUT=$ROOT/docs/BENCHMARKS.md
SECTION=""
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --plain) NPLAIN=$2; shift 2 ;;
    --offload) NOFFLOAD=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --ob) OB=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --section) SECTION=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "b8b: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
CLANG=$LLVM_BIN/clang
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup b8b hyperfine cmake ninja ccache "$CLANG" "$OB"

pre=$WORK/prefix
cmake --install "$(dirname "$OB")" --prefix "$pre" >/dev/null
b=$WORK/b8b c=$WORK/cache cc=$WORK/ccache
mkdir -p "$b/co1"
gen_c "$b/co1/proj" "$NOFFLOAD" "$TARGETS"
rm -f "$b/co1/proj/Makefile.oneshot" "$b/co1/proj/offload.json"
gen_cmake_mixed "$b/co1/proj" "$TARGETS" "$NPLAIN"

# cfg CHECKOUT LAUNCHER: configure CHECKOUT/proj into CHECKOUT/build.
cfg() {
  echo "cmake -S $1/proj -B $1/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=$CLANG -DCMAKE_PREFIX_PATH=$pre -DLAUNCHER=$2 >/dev/null"
}
fresh() { echo "rm -rf $b/co2 && mkdir -p $b/co2 && cp -r $b/co1/proj $b/co2/proj && $(cfg "$b/co2" "$1")"; }
obenv="env OFFLOAD_BUILD_CACHE_DIR=$c OFFLOAD_BUILD_BASE_DIR=$b"
ccenv="env CCACHE_DIR=$cc CCACHE_BASEDIR=$b CCACHE_NOHASHDIR=1"

say "B8b: first builds (cold caches), 1 run each"
hf B8b-cold 1 \
  -n ob --prepare "rm -rf $c; $(fresh offload-build)" "$obenv cmake --build $b/co2/build" \
  -n ccache --prepare "rm -rf $cc; $(fresh ccache)" "$ccenv cmake --build $b/co2/build" \
  -n oneshot --prepare "$(fresh none)" "cmake --build $b/co2/build"
say "B8b: warming the caches from a first checkout"
eval "$(cfg "$b/co1" offload-build)"
$obenv OFFLOAD_BUILD_BASE_DIR="$b/co1" cmake --build "$b/co1/build" >/dev/null
rm -rf "$b/co1/build"
eval "$(cfg "$b/co1" ccache)"
$ccenv CCACHE_BASEDIR="$b/co1" cmake --build "$b/co1/build" >/dev/null
rm -rf "$b/co1/build"
say "B8b: fresh clone and build directory, warm caches, $REPS run(s) each"
hf B8b "$REPS" \
  -n ob --prepare "$(fresh offload-build)" "$obenv cmake --build $b/co2/build" \
  -n ccache --prepare "$(fresh ccache)" "$ccenv cmake --build $b/co2/build" \
  -n oneshot --prepare "$(fresh none)" "cmake --build $b/co2/build"
eval "$(fresh offload-build)"
EXPLAIN=$($obenv OFFLOAD_BUILD_EXPLAIN=1 cmake --build "$b/co2/build" 2>&1 || true)
HITS=$(grep -c ': hit$' <<<"$EXPLAIN" || true)
MISSES=$(grep -c ': miss: ' <<<"$EXPLAIN" || true)
PLAIN_HITS=$(grep -cE 'explain: host [^ ]*plain/p_[0-9]+\.c: hit$' <<<"$EXPLAIN" || true)
UNCHANGED=$(grep -c 'not cached (run unchanged)' <<<"$EXPLAIN" || true)
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)

sec=$WORK/b8b.md
{
  echo "## B8b: CMake with plain compiles: $NPLAIN plain and $NOFFLOAD offload TUs, fresh clone and build directory"
  echo
  echo "bench/b8b.sh at $COMMIT ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo "a CMake project (Ninja) of $NPLAIN plain C TUs (a static library) and $NOFFLOAD offload TUs"
  echo "($TARGETS) linked into one program, every compile through the launcher. Warm: the cache"
  echo "filled from a first checkout, then a fresh clone and build directory (median of $REPS)."
  echo "offload-build's warm build: $HITS jobs served ($PLAIN_HITS of them plain compiles, each one job),"
  echo "$MISSES run, $UNCHANGED compiles run unchanged."
  echo
  echo "| build | offload-build | ccache | ratio | no launcher (clang) |"
  echo "|---|---|---|---|---|"
  echo "| first build, cold caches | $(ms "${M[B8b-cold/ob]:-}") | $(ms "${M[B8b-cold/ccache]:-}") | $(ratio "${M[B8b-cold/ob]:-}" "${M[B8b-cold/ccache]:-}") | $(ms "${M[B8b-cold/oneshot]:-}") |"
  echo "| fresh clone, warm cache | $(ms "${M[B8b/ob]:-}") | $(ms "${M[B8b/ccache]:-}") | $(ratio "${M[B8b/ob]:-}" "${M[B8b/ccache]:-}") | $(ms "${M[B8b/oneshot]:-}") |"
} >"$sec"
if [ -n "$SECTION" ]; then cp "$sec" "$SECTION"; else replace_section B8b "$OUT" "$sec"; fi
cat "$sec"
