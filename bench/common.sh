# Helpers shared by bench/run.sh and bench/b9.sh (sourced; they set WORK, LOG
# and `declare -A M` first).

# hf KEY RUNS [hyperfine args: -n NAME --prepare CMD ... COMMANDS]: time them;
# M[KEY/NAME] = median seconds for each command NAME.
hf() {
  local key=$1 runs=$2; shift 2
  local csv=$WORK/$key.csv
  {
    echo "== $key"
    hyperfine --style basic --runs "$runs" --export-csv "$csv" "$@"
  } >>"$LOG" 2>&1 || { say "hyperfine failed for $key; see the log:"; tail -20 "$LOG" >&2; exit 1; }
  local name median
  while IFS=, read -r name _ _ median _; do
    [ "$name" = command ] && continue
    M[$key/$name]=$median
  done <"$csv"
}

ms() { awk -v s="${1:-}" 'BEGIN { if (s == "") print "n/a"; else if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }
ratio() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2fx", a / b }'; }
speedup() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.1fx", a / b }'; }
