#!/usr/bin/env bash
# B11: Fortran through the launcher (issue #54, item 5). A Jacobi-like Fortran
# project (bench/gen.sh fortran: a kind module, NMOD modules with target
# regions, a main), built by its Makefile under make -j2 for the x86_64 host
# device: plain flang-22 against `offload-build flang-22` with an empty cache
# (the cold cost) and with a warm one (a clean rebuild), CPU seconds and wall.
#
# Usage: bench/b11.sh [--reps N] [--modules N] [--ob BINARY] [--out FILE]
#                     [--section FILE]
#   --modules N   modules with target regions (default 7)
#   --out FILE    replace (or add) the "## B11" section of FILE
#                 (default docs/BENCHMARKS.md)
#   --section FILE  write only the section to FILE
# Needs hyperfine, make and flang-22; BINARY defaults to build/offload-build.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3
NMOD=7
OB=${OFFLOAD_BUILD:-$ROOT/build/offload-build}
OUT=$ROOT/docs/BENCHMARKS.md
SECTION=""
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --modules) NMOD=$2; shift 2 ;;
    --ob) OB=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --section) SECTION=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "b11: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
FLANG=${FLANG:-flang-22}
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup b11 hyperfine make "$FLANG" "$OB"

p=$WORK/jacobi c=$WORK/cache
gen_fortran "$p" "$NMOD"
mk="make -s -j2 -C $p"
obenv="env OFFLOAD_BUILD_CACHE_DIR=$c"
say "B11: Fortran cold and warm builds, $REPS run(s) each"
hf B11 "$REPS" \
  -n plain --prepare "$mk clean" "$mk FC=$FLANG" \
  -n cold --prepare "$mk clean; rm -rf $c" "$obenv $mk 'FC=$OB $FLANG'" \
  -n warm --prepare "$mk clean" "$obenv $mk 'FC=$OB $FLANG'"
$mk clean
STATS=$($obenv "$OB" cache stats --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("hits",0), d.get("misses",0))' || echo "? ?")
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)

sec=$WORK/b11.md
{
  echo "## B11: Fortran through the launcher: a Jacobi-like project under make -j2"
  echo
  echo "bench/b11.sh at $COMMIT ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo "bench/gen.sh fortran, a kind module and $NMOD modules with a target region each and a main"
  echo "($((NMOD + 2)) compiles, host device), its Makefile with FC=$FLANG against"
  echo "FC=\"offload-build $FLANG\"; cold: an empty cache, warm: a clean rebuild (median of $REPS;"
  echo "CPU: user + sys of the whole make). Cache counters after all runs (hits misses): $STATS."
  echo
  echo "| build | wall | CPU s | wall ratio to flang | CPU ratio to flang |"
  echo "|---|---|---|---|---|"
  for n in plain cold warm; do
    echo "| $n | $(ms "${M[B11/$n]:-}") | ${M[B11/$n/cpu]:-n/a} | $(ratio "${M[B11/$n]:-}" "${M[B11/plain]:-}") | $(ratio "${M[B11/$n/cpu]:-}" "${M[B11/plain/cpu]:-}") |"
  done
} >"$sec"
if [ -n "$SECTION" ]; then cp "$sec" "$SECTION"; else replace_section B11 "$OUT" "$sec"; fi
cat "$sec"
