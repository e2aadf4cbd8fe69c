# shellcheck shell=bash disable=SC2034  # M: read by the callers
# Helpers shared by bench/run.sh, b9.sh, b10.sh and before_after.sh (sourced;
# bench_setup sets up what hf needs: WORK, LOG and M).

# bench_setup NAME TOOL...: fail unless every TOOL is on PATH (or an executable
# path); then WORK (a fresh temporary directory), LOG (hyperfine's log in it),
# M (hf's medians in seconds, by key), PIDS (servers to stop), a trap that runs
# bench_stop_extra (when the script defines it), stops PIDS and removes WORK
# (unless KEEP=1), bench/gen.sh, a clean environment and `say`.
bench_setup() {
  local name=$1 tool; shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || [ -x "$tool" ] ||
      { echo "$name: $tool not found; run scripts/setup.sh" >&2; exit 2; }
  done
  BENCH_NAME=$name
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/ob-$name.XXXXXX")
  LOG=$WORK/hyperfine.log
  declare -gA M
  PIDS=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  # shellcheck source=bench/gen.sh
  source "$BENCH_ROOT/bench/gen.sh"
  export CI=1 NO_COLOR=1
  unset OFFLOAD_BUILD_CACHE_DIR OFFLOAD_BUILD_EXPLAIN OFFLOAD_BUILD_VERBOSE OFFLOAD_BUILD_REMOTE_STORAGE \
    OFFLOAD_BUILD_REMOTE_EXECUTION MAKEFLAGS CCACHE_REMOTE_STORAGE || true
}
say() { printf '%s: %s\n' "${BENCH_NAME:-bench}" "$*" >&2; }
bench_cleanup() {
  if declare -F bench_stop_extra >/dev/null; then bench_stop_extra; fi
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "$BENCH_NAME: projects kept in $WORK"; else rm -rf "$WORK"; fi
}
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# hf KEY RUNS [hyperfine args: -n NAME --prepare CMD ... COMMANDS]: time them;
# M[KEY/NAME] = median seconds for each command NAME.
hf() {
  local key=$1 runs=$2; shift 2
  local csv=$WORK/$key.csv
  {
    echo "== $key"
    hyperfine --style basic --runs "$runs" --export-csv "$csv" "$@"
  } >>"$LOG" 2>&1 || { say "hyperfine failed for $key; see the log:"; tail -20 "$LOG" >&2; exit 1; }
  local name median user system
  while IFS=, read -r name _ _ median user system _; do
    [ "$name" = command ] && continue
    M[$key/$name]=$median
    # CPU seconds (user + sys, hyperfine's means): on a shared machine the
    # comparison that load does not stretch.
    M[$key/$name/cpu]=$(awk -v u="$user" -v s="$system" 'BEGIN { print u + s }')
  done <"$csv"
}

ms() { awk -v s="${1:-}" 'BEGIN { if (s == "") print "n/a"; else if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }
ratio() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2fx", a / b }'; }
speedup() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.1fx", a / b }'; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_port PORT [PID]: until 127.0.0.1:PORT accepts (5 s at most; gives up
# at once when process PID has exited).
wait_port() {
  local _
  for _ in $(seq 500); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    [ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

# replace_section NAME OUT SECTION_FILE: put SECTION_FILE in place of OUT's
# "## NAME:" section, or before "## Where the time goes" when OUT has none.
replace_section() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, re, sys
name, out, sec = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
m = re.search(r"^## " + re.escape(name) + r":.*?(?=^## |\Z)", text, flags=re.S | re.M)
if m:
    text = text[:m.start()] + sec + "\n" + text[m.end():]
else:
    n = re.search(r"^## Where the time goes", text, flags=re.M)
    pos = n.start() if n else len(text)
    text = text[:pos] + sec + "\n" + text[pos:]
open(out, "w").write(text)
PY
}
