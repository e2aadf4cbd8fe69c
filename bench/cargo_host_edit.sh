#!/usr/bin/env bash
# CPU seconds (user+sys of offload-build and everything it runs) of a
# host-only edit of examples/rust-workspace (`cargo build` after editing
# app/src/main.rs, dev profile), for two builds of offload-build, alternating
# (issue 39: a device dir per configuration and the two-level key cost no more).
#   bench/cargo_host_edit.sh BEFORE_BINARY AFTER_BINARY [--reps N]
# Prints a Markdown table: median CPU seconds and wall seconds per binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/cargo_host_edit.sh BEFORE AFTER [--reps N]" >&2; exit 2; }
BEFORE=$(realpath "$1") AFTER=$(realpath "$2"); shift 2
REPS=5
[ "${1:-}" = --reps ] && REPS=$2
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup cargo_host_edit /usr/bin/time "$BEFORE" "$AFTER"
for v in before after; do
  ob=$BEFORE; [ $v = after ] && ob=$AFTER
  mkdir -p "$WORK/$v" && cp -r "$ROOT/examples/rust-workspace" "$WORK/$v/ws" && rm -rf "$WORK/$v/ws/target"
  "$ob" -C "$WORK/$v/ws/app" --cache-dir "$WORK/$v/cache" -q cargo build 2>/dev/null
done
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for ((i = 1; i <= REPS; i++)); do
  for v in before after; do
    ob=$BEFORE; [ $v = after ] && ob=$AFTER
    echo "// edit $i" >>"$WORK/$v/ws/app/src/main.rs"
    /usr/bin/time -f "%U %S %e" -o "$WORK/$v.t" "$ob" -C "$WORK/$v/ws/app" --cache-dir "$WORK/$v/cache" -q cargo build \
      >/dev/null 2>&1
    read -r u s e <"$WORK/$v.t"
    echo "$u $s" | awk '{ print $1 + $2 }' >>"$WORK/$v.cpu"
    echo "$e" >>"$WORK/$v.wall"
  done
done
echo "| host-only edit, rust-workspace, dev ($REPS runs) | CPU s (user+sys), median | wall s, median |"
echo "|---|---|---|"
for v in before after; do
  echo "| $v | $(median <"$WORK/$v.cpu") | $(median <"$WORK/$v.wall") |"
done
