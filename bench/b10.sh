#!/usr/bin/env bash
# B10: remote execution (docs/DISTRIBUTED.md). The 50-source, 3-target project
# (bench/gen.sh: host, sm_90, gfx90a) built cold through Bazel's REAPI
# reference worker on loopback (a fresh worker each run: an empty CAS and
# action cache) against a cold local build, both -j2 with an empty local
# cache: the overhead ratio, the bytes uploaded, the per-job round trip, and
# the CPU each side spends per job sent (this machine: the dependency scan,
# hashing, transfers; the worker: its own cost beyond the compile).
# Then a fresh clone with an empty local cache served by the engine's action
# cache, against the same checkout served by a warm local cache and by a warm
# Redis (as B9). Everything runs on this one machine, the worker too: the
# figures are a ratio of overhead, not a speedup. From the cold local build's
# trace: the sum of the job times and the critical path, for the model of a
# cold build on W workers (docs/DISTRIBUTED.md), printed as a table.
#
# Usage: bench/b10.sh [--reps N] [--warmups N] [--quick] [--ob BINARY] [--out FILE] [--section FILE]
#   --warmups N     untimed cold builds through the worker after its first (default 6)
#   --quick         1 run each, one warm-up, a 4x3 project: a smoke test of the script
#   --out FILE      replace (or add) the "## B10" section of FILE (default
#                   docs/BENCHMARKS.md)
#   --section FILE  write only the section to FILE (bench/run.sh uses this)
# Needs hyperfine, redis-server, python3 (scripts/setup.sh), and the worker's
# Debian packages (tests/support/reapi-worker/build.sh installs them); without
# the remote execution module or the worker, the section says why B10 was
# skipped.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=2
WARMUPS=6
OB=${OFFLOAD_BUILD:-$ROOT/build/offload-build}
OUT=$ROOT/docs/BENCHMARKS.md
SECTION=""
QUICK=0
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --quick) QUICK=1; REPS=1; WARMUPS=1; shift ;;
    --warmups) WARMUPS=$2; shift 2 ;;
    --ob) OB=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --section) SECTION=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "b10: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
JOBS=2
TUS=50
TARGETS=host,sm_90,gfx90a
[ "$QUICK" = 1 ] && TUS=4
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup b10 hyperfine redis-server python3 "$OB"
WPID=""
stop_worker() {
  if [ -n "$WPID" ]; then kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; WPID=""; fi
}
bench_stop_extra() { stop_worker; }

# skip WHY: the section says B10 was not measured, and why.
skip() {
  say "skipped: $1"
  local text
  text=$(printf '## B10: remote execution on a REAPI engine\n\nSkipped: %s.\n' "$1")
  if [ -n "$SECTION" ]; then echo "$text" >"$SECTION"; else echo "$text" >"$WORK/b10.md"; write_out; fi
  exit 0
}
write_out() { replace_section B10 "$OUT" "$WORK/b10.md"; say "wrote the B10 section of $OUT"; }

[ -f "$(dirname "$OB")/libob-remote-execution.so" ] ||
  skip "offload-build was built without the remote execution module (libgrpc++-dev, protobuf-compiler-grpc, bazel-bootstrap-source: scripts/setup.sh)"
JARS=$WORK/worker-jar
if ! NO_SANDBOX=1 bash "$ROOT/tests/support/reapi-worker/build.sh" "$JARS" >"$WORK/worker-build.log" 2>&1; then
  skip "Bazel's worker could not be built (tests/support/reapi-worker/build.sh: $(tail -1 "$WORK/worker-build.log"))"
fi

# start_worker DIR: a worker with an empty CAS and action cache in DIR (its
# port in WPORT, its PID in WPID), two actions at once as -j2.
start_worker() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir/work" "$dir/cas"
  WPORT=$(free_port)
  # start-worker.sh execs the JVM: WPID is the JVM's (its CPU is worker_cpu's).
  "$JARS/start-worker.sh" "$WPORT" "$dir/work" "$dir/cas" --jobs="$JOBS" >"$dir/log" 2>&1 &
  WPID=$!
  local _ i
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$WPORT") 2>/dev/null; then
      # The JVM's own start, taken off its CPU time (worker_cpu).
      for i in 1 2 3; do sleep 1; done
      WCPU0=$(worker_cpu)
      return 0
    fi
    kill -0 "$WPID" 2>/dev/null || break
    sleep 0.1
  done
  skip "Bazel's worker did not start ($(tail -1 "$dir/log"))"
}

# The worker's CPU seconds so far: its own and its finished actions'.
worker_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$WPID/stat"; }
# Its JVM's own CPU seconds so far (its actions' not counted).
jvm_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$WPID/stat"; }
# since A B: B - A (seconds).
since() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
# The JVM CPU figures as the section prints them.
two_places() { printf '%.2f ' "$@" | sed 's/ $//'; }
# cpu_of FILE CMD...: run CMD; FILE gets its CPU seconds, children included.
cpu_of() {
  local file=$1; shift
  /usr/bin/time -f '%U %S' -o "$file.time" "$@"
  awk '{ print $1 + $2 }' "$file.time" >"$file"
}

RPORT=$(free_port)
mkdir -p "$WORK/redis"
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" >"$WORK/redis/log" 2>&1 &
RPID=$!
PIDS+=("$RPID")
wait_port "$RPORT" || { say "redis-server did not start"; exit 1; }
REDIS=redis://127.0.0.1:$RPORT

p=$WORK/p
gen_c "$p" "$TUS" "$TARGETS"
ob="$OB -C $p -j$JOBS"
now() { date +%s.%N; }

# salt WORD: every source ends in a global of its own named after WORD, on
# the device too, so that no entry the engine holds (nor any action it ran)
# matches a build of them, packages and links included: cold for the
# engine, whatever it ran before.
salt() {
  local f k=0
  for f in "$p"/src/*.c; do
    sed -i '/b10 salt/d' "$f"
    printf '#pragma omp declare target /* b10 salt */\nint b10_salt_%s_%d = %d; /* b10 salt */\n#pragma omp end declare target /* b10 salt */\n' \
      "$1" "$k" "$k" >>"$f"
    k=$((k + 1))
  done
}

# Cold: an empty local cache, and for the remote build an engine that holds
# nothing of these sources. The first cold build goes through a freshly
# started worker (its JVM loading and compiling its own code as it serves:
# reported apart); the timed ones through the same worker since, as a team's
# long-running engine, warm but with an empty action cache for their sources.
say "B10: cold builds, local and through the worker, $REPS run(s) each, after $((WARMUPS + 1)) through a fresh worker"
start_worker "$WORK/worker"
# The fresh worker's first build, then WARMUPS more untimed: its JVM
# compiles its own hot code as it serves, and its CPU per build (its
# compiles' not counted) falls for several builds (9.4, 6.9, 4.2, 4.3, 3.2,
# 3.5 s, ... 2.1 s once settled, measured here), so a worker that served one
# build is not yet the team's long-running engine. Each one's JVM CPU is reported.
JVM_CPU=() WARM_T=()
for w in $(seq 0 "$WARMUPS"); do
  salt "warmup_$w"
  rm -rf "$p/build" "$WORK/c"
  j0=$(jvm_cpu)
  t0=$(now)
  $ob -q --cache-dir "$WORK/c" --remote-execution "grpc://127.0.0.1:$WPORT" build
  WARM_T+=("$(since "$t0" "$(now)")")
  JVM_CPU+=("$(since "$j0" "$(jvm_cpu)")")
done
M[fresh_worker]=${WARM_T[0]}
M[second_build]=${WARM_T[1]:-${WARM_T[0]}}
LOCAL_T=() REMOTE_T=() REP_JVM=()
for rep in $(seq "$REPS"); do
  salt "rep_$rep"
  rm -rf "$p/build" "$WORK/c"
  t0=$(now)
  $ob -q --cache-dir "$WORK/c" --trace "$WORK/local-$rep.trace.json" build
  LOCAL_T+=("$(since "$t0" "$(now)")")
  rm -rf "$p/build" "$WORK/c"
  w0=$(worker_cpu)
  j0=$(jvm_cpu)
  t0=$(now)
  cpu_of "$WORK/remote-$rep.cpu" $ob --cache-dir "$WORK/c" --remote-execution "grpc://127.0.0.1:$WPORT" \
    --trace "$WORK/remote-$rep.trace.json" build 2>"$WORK/remote-$rep.err"
  REMOTE_T+=("$(since "$t0" "$(now)")")
  since "$w0" "$(worker_cpu)" >"$WORK/worker-$rep.cpu"
  REP_JVM+=("$(since "$j0" "$(jvm_cpu)")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
M[local]=$(median "${LOCAL_T[@]}")
M[remote]=$(median "${REMOTE_T[@]}")
SUMMARY=$(grep -oE 'remote execution: .*' "$WORK/remote-$REPS.err" || echo "remote execution: (no summary line)")
EXECUTED=$(grep -oE '[0-9]+ executed' <<<"$SUMMARY" | grep -oE '^[0-9]+' || echo 0)
UPLOADED=$(grep -oE '[0-9.]+ [KMG]?i?B uploaded' <<<"$SUMMARY" | sed 's/ uploaded//' || echo "?")
JOBS_TOTAL=$(grep -oE '^offload-build: [0-9]+ jobs' "$WORK/remote-$REPS.err" | grep -oE '[0-9]+' || echo "?")

# The jobs' own times (the last cold local build's trace): their sum, the
# critical path, and the sum of the jobs remote execution sends; the same
# jobs' mean time in the remote build's trace (its round trip per job).
read -r WORK_S CRIT_S CRIT_CPU REMOTE_WORK_S NREMOTE LOCAL_MEAN REMOTE_MEAN SENT_CPU LOCAL_CPU O_LOCAL O_WORKER <<<"$(python3 - "$WORK/local-$REPS.trace.json" "$WORK/remote-$REPS.trace.json" "$(cat "$WORK/remote-$REPS.cpu")" "$(cat "$WORK/worker-$REPS.cpu")" <<'PY'
import json, sys
def jobs(f):
    return [e for e in json.load(open(f))["traceEvents"] if e.get("ph") == "X"]
local, remote = jobs(sys.argv[1]), jobs(sys.argv[2])
sent = {"device", "host-ir", "host"}
total = sum(e["dur"] for e in local) / 1e6
# The critical path: the longest chain of dependent jobs.
by = {e["args"]["job"]: e for e in local}
def critical(cost):
    memo = {}
    def chain(i):
        if i not in memo:
            e = by[i]
            memo[i] = cost(e) + max((chain(d) for d in e["args"].get("deps", []) if d in by), default=0)
        return memo[i]
    return max((chain(i) for i in by), default=0)
crit = critical(lambda e: e["dur"] / 1e6)
crit_cpu = critical(lambda e: e["args"].get("cpu_s", 0))
lr = [e["dur"] / 1e6 for e in local if e["cat"] in sent]
rr = [e["dur"] / 1e6 for e in remote if e["args"].get("where", "").startswith("remote")]
# CPU: of the sent jobs and of the others when all ran here; per job sent,
# what the remote build cost this machine beyond the jobs kept here, and the
# worker beyond the compiles themselves.
sent_cpu = sum(e["args"].get("cpu_s", 0) for e in local if e["cat"] in sent)
kept_cpu = sum(e["args"].get("cpu_s", 0) for e in local if e["cat"] not in sent)
n = max(1, len(rr))
o_local = max(0.0, (float(sys.argv[3]) - kept_cpu) / n)
o_worker = max(0.0, (float(sys.argv[4]) - sent_cpu) / n)
print(f"{total:.2f} {crit:.2f} {crit_cpu:.2f} {sum(lr):.2f} {len(rr)} {sum(lr) / max(1, len(lr)):.3f} {sum(rr) / n:.3f} "
      f"{sent_cpu:.2f} {kept_cpu:.2f} {o_local:.3f} {o_worker:.3f}")
PY
)"

# A fresh clone with an empty local cache: served by the engine's action
# cache (the worker warm from the last cold build), by Redis, or a warm local cache.
say "B10: a fresh clone served by the engine's action cache, by Redis and by the local cache, $REPS run(s) each"
rm -rf "$p/build"
$ob -q --cache-dir "$WORK/warm" --remote-storage "$REDIS" build
rm -rf "$p/build"
hf B10 "$REPS" \
  -n engine --prepare "rm -rf $p/build $WORK/e" "$ob -q --cache-dir $WORK/e --remote-execution grpc://127.0.0.1:$WPORT build" \
  -n redis --prepare "rm -rf $p/build $WORK/e" "$ob -q --cache-dir $WORK/e --remote-storage $REDIS build" \
  -n localcache --prepare "rm -rf $p/build" "$ob -q --cache-dir $WORK/warm build"
# The same fresh clones in CPU seconds, the server's included (the worker's
# and redis-server's /proc counters): what the machine spent on each.
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
rm -rf "$p/build" "$WORK/e"
w0=$(worker_cpu)
cpu_of "$WORK/fresh-engine.cpu" $ob -q --cache-dir "$WORK/e" --remote-execution "grpc://127.0.0.1:$WPORT" build
FRESH_CPU_ENGINE=$(awk -v c="$(cat "$WORK/fresh-engine.cpu")" -v a="$w0" -v b="$(worker_cpu)" 'BEGIN { printf "%.2f", c + b - a }')
rm -rf "$p/build" "$WORK/e"
r0=$(proc_cpu "$RPID")
cpu_of "$WORK/fresh-redis.cpu" $ob -q --cache-dir "$WORK/e" --remote-storage "$REDIS" build
FRESH_CPU_REDIS=$(awk -v c="$(cat "$WORK/fresh-redis.cpu")" -v a="$r0" -v b="$(proc_cpu "$RPID")" 'BEGIN { printf "%.2f", c + b - a }')
rm -rf "$p/build" "$WORK/e"
FRESH_ERR=$($ob -v --cache-dir "$WORK/e" --remote-execution "grpc://127.0.0.1:$WPORT" build 2>&1 || true)
# The project's working set (exec/remote/working_set.hpp): entries served from it.
WORKING_SET=$(grep -oE 'working set of this project: [0-9]+ of [0-9]+ entries served' <<<"$FRESH_ERR" |
  sed 's/.*: //' || echo "?")
# The jobs the local cache's engine layer served (engine_storage), and what
# remote execution did besides (executed, from the engine's action cache).
SERVED=$(grep -oE '^offload-build: [0-9]+ jobs: [0-9]+ from cache, [0-9]+ run' <<<"$FRESH_ERR" | sed 's/^offload-build: //' || echo "?")
REMOTE_LINE=$(grep -oE 'remote execution: [0-9]+ executed, [0-9]+ from the engine.s cache' <<<"$FRESH_ERR" || echo "remote execution: ?")
LAYER_HITS=$($OB --cache-dir "$WORK/e" cache stats --json |
  python3 -c 'import json,sys; r=json.load(sys.stdin).get("remotes",{}); print(sum(v.get("hits",0) for k,v in r.items() if k.endswith(" (action cache)")))')
# Jobs whose dependency manifest in the engine held: built with no scan here.
UNSCANNED=$(grep -oE '[0-9]+ without a dependency scan' <<<"$FRESH_ERR" | grep -oE '^[0-9]+' || echo 0)
stop_worker

# The model (docs/DISTRIBUTED.md): W workers of 2 slots, jobs = W x 2,
#   T(W) = max(critical path, (sent work + o_worker x N) / (W x 2)) + (kept work + o_local x N) / -j
# in CPU seconds (what the jobs take on idle machines; this shared machine's
# load stretches wall times), from these figures (the kept work: packages,
# links; o_local: this machine's CPU per job sent, the dependency scan
# included, which stays here).
model_row() {
  awk -v w="$1" -v cp="$CRIT_CPU" -v rw="$SENT_CPU" -v kept="$LOCAL_CPU" -v n="$NREMOTE" -v ow="$O_WORKER" \
    -v ol="$O_LOCAL" -v j="$JOBS" \
    'BEGIN { slots = w * 2; par = (rw + ow * n) / slots; here = (kept + ol * n) / j;
             t = (cp > par ? cp : par) + here;
             printf "| %d | %.1f s | %.1f s | %.1f s |\n", w, par, here, t }'
}

section() {
  echo "## B10: remote execution on a REAPI engine"
  echo
  echo "Written by \`bench/b10.sh\` on $(date -u +%Y-%m-%d) at commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "($REPS runs each; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) CPUs)."
  echo "The project: bench/gen.sh's $TUS sources for host, sm_90 and gfx90a ($JOBS_TOTAL jobs). The engine:"
  echo "Bazel's REAPI reference worker (tests/support/reapi-worker/, \`--jobs=$JOBS\`) on 127.0.0.1,"
  echo "**on the same machine**: its actions compete with the build for the same $(nproc) CPUs, so these"
  echo "figures are a ratio of overhead, not a speedup. Both cold builds run \`-j$JOBS\` with an empty"
  echo "local cache, on the same sources (each run's ending in a global of its own, on the device"
  echo "too: nothing the engine holds matches them); the remote one sends up to $((JOBS * 4)) jobs at once (the default"
  echo "\`jobs\`, 4 x CPUs) to the worker's $JOBS slots. The timed ones go through a worker that served"
  echo "$((WARMUPS + 1)) cold builds before, as a team's long-running engine is warm; the first and the second build"
  echo "through the freshly started worker, its JVM loading and compiling its own code as it serves, are"
  echo "rows of their own. The worker's own CPU (its JVM; its compiles not counted) per cold build: the"
  echo "$((WARMUPS + 1)) before, $(two_places "${JVM_CPU[@]}") s; the timed ones, $(two_places "${REP_JVM[@]}") s."
  echo
  echo "| build | time | |"
  echo "|---|---|---|"
  echo "| cold, local | $(ms "${M[local]}") | 1.00x |"
  echo "| cold, through the worker | $(ms "${M[remote]}") | $(ratio "${M[remote]}" "${M[local]}") |"
  echo "| cold, through the freshly started worker (1 run) | $(ms "${M[fresh_worker]}") | $(ratio "${M[fresh_worker]}" "${M[local]}") |"
  echo "| cold, the worker's second build (1 run) | $(ms "${M[second_build]}") | $(ratio "${M[second_build]}" "${M[local]}") |"
  echo "| fresh clone, empty local cache, engine's action cache | $(ms "${M[B10/engine]:-}") | $(ratio "${M[B10/engine]:-}" "${M[B10/redis]:-}") of Redis |"
  echo "| fresh clone, empty local cache, Redis (as B9) | $(ms "${M[B10/redis]:-}") | 1.00x |"
  echo "| same checkout, build directory removed, warm local cache | $(ms "${M[B10/localcache]:-}") | $(ratio "${M[B10/localcache]:-}" "${M[B10/redis]:-}") of Redis |"
  echo
  echo "The fresh clones in CPU seconds (user + sys, 1 run each), the server's included: through the"
  echo "engine $FRESH_CPU_ENGINE s (offload-build and the worker), from Redis $FRESH_CPU_REDIS s (offload-build"
  echo "and redis-server). Through the engine, $WORKING_SET from the project's working set (one value"
  echo "the last build left in the engine: exec/remote/working_set.hpp)."
  echo
  echo "The cold remote build: $SUMMARY ($EXECUTED actions executed, $UPLOADED uploaded)."
  echo "A sent job (device pass, host parse, host codegen) took $LOCAL_MEAN s on average in the"
  echo "local build and $REMOTE_MEAN s in the remote one, from its start to its outputs written"
  echo "(the dependency scan, the uploads, the worker's queue and run, the downloads). In CPU time"
  echo "(\`/usr/bin/time\` of the build, the worker's \`/proc\` counters less its start): this machine"
  echo "spent $O_LOCAL s per job sent (the dependency scan, hashing, gRPC), the worker $O_WORKER s per"
  echo "job beyond the compile itself (staging the input root, the JVM). The fresh clone through the"
  echo "engine: $SERVED, $LAYER_HITS entries (results and direct-mode manifests) read from the engine's"
  echo "action cache as a layer of the local cache (\`engine_storage\`: packages, assembles and the link"
  echo "included, nothing scanned, sent or run); $REMOTE_LINE, $UNSCANNED with no dependency scan."
  echo
  echo "From the cold local build's trace: the jobs' wall times add up to $WORK_S s, $REMOTE_WORK_S s of it in"
  echo "the $NREMOTE jobs remote execution sends, and the critical path (the longest chain of dependent"
  echo "jobs) is $CRIT_S s; in CPU time (\`args.cpu_s\`), the sent jobs took $SENT_CPU s, the kept ones"
  echo "(packages, links) $LOCAL_CPU s, the critical path $CRIT_CPU s. Wall times are the CPU times"
  echo "stretched by this machine's load. The model of docs/DISTRIBUTED.md in CPU seconds (idle"
  echo "machines), W workers of 2 slots each, \`jobs\` = W x 2 and -j$JOBS here:"
  echo
  echo "| W | on the workers: max(critical path, (sent work + worker overhead) / slots) | here: (kept work + scans and transfers) / -j$JOBS | T(W) |"
  echo "|---|---|---|---|"
  for w in 1 4 16 64; do model_row "$w"; done
}

if [ -n "$SECTION" ]; then
  section >"$SECTION"
else
  section >"$WORK/b10.md"
  write_out
fi
