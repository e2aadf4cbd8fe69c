#!/usr/bin/env bash
# B9: remote storage. A fresh clone (no build directory) with an EMPTY local
# cache and a warm remote (Redis, then HTTP via nginx WebDAV, both private on
# 127.0.0.1), against a cold build, one-shot clang under make -j2, and ccache
# with the same server as its remote storage (also with an empty local cache),
# and sccache's Redis and WebDAV backends on the same servers where the
# installed sccache has them (tried; the table says when it does not).
# Then the cost of an unreachable remote (refused; a listener that never
# answers) on a clean rebuild whose local cache is warm.
#
# Usage: bench/b9.sh [--reps N] [--quick] [--ob BINARY] [--out FILE] [--section FILE]
#   --quick         1 run each, a 1x3 project only: a smoke test of the script
#   --projects "10x3 50x1"  which projects (default both)
#   --no-dead       skip the unreachable-remote measurements
#   --out FILE      replace (or add) the "## B9" section of FILE (default
#                   docs/BENCHMARKS.md)
#   --section FILE  write only the section to FILE (bench/run.sh uses this)
# Needs redis-server, nginx, hyperfine, ccache (scripts/setup.sh); sccache
# optional.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3
OB=${OFFLOAD_BUILD:-$ROOT/build/offload-build}
OUT=$ROOT/docs/BENCHMARKS.md
SECTION=""
QUICK=0
DEAD=1
PROJECTS="10x3 50x1"
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --quick) QUICK=1; REPS=1; shift ;;
    --projects) PROJECTS=$2; shift 2 ;;
    --no-dead) DEAD=0; shift ;;
    --ob) OB=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --section) SECTION=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "b9: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
JOBS=2
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
CLANG=$LLVM_BIN/clang
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup b9 hyperfine make ccache redis-server redis-cli nginx python3 "$CLANG" "$OB"
bench_stop_extra() { sc_stop; }
# shellcheck source=bench/sccache.sh
source "$ROOT/bench/sccache.sh"

# ---------------------------------------------------------------- servers
RPORT=$(free_port)
mkdir -p "$WORK/redis"
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK/redis" \
  >"$WORK/redis/log" 2>&1 &
PIDS+=($!)
HPORT=$(free_port)
mkdir -p "$WORK/nginx/root" "$WORK/nginx/tmp" "$WORK/nginx/logs"
{
  [ "$(id -u)" = 0 ] && echo "user root;"
  cat <<EOF
daemon off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx/tmp/body;
  proxy_temp_path $WORK/nginx/tmp/proxy;
  fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
  uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
  scgi_temp_path $WORK/nginx/tmp/scgi;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:$HPORT;
    root $WORK/nginx/root;
    location / { dav_methods PUT DELETE; create_full_put_path on; }
  }
}
EOF
} >"$WORK/nginx/nginx.conf"
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" >"$WORK/nginx/logs/stderr" 2>&1 &
PIDS+=($!)
# A listener that accepts and never answers.
BPORT=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$BPORT)); s.listen(64); time.sleep(86400)" &
PIDS+=($!)
wait_port "$RPORT" && wait_port "$HPORT" && wait_port "$BPORT" || { say "a server did not start"; exit 1; }
REFUSED=$(free_port)

REDIS=redis://127.0.0.1:$RPORT
HTTP=http://127.0.0.1:$HPORT/ob

# sccache against the same two servers where this sccache build has the
# backend (tried: a backend it lacks fails to start, "cache type is not
# enabled", or its setting is ignored and the cache stays on local disk).
# SC_OK[b]=1, or SC_WHY[b] says why not; the table records that.
declare -A SC_OK SC_WHY SC_ENV SC_NOTE
SC_ENV[redis]="SCCACHE_REDIS=$REDIS"
SC_ENV[http]="SCCACHE_WEBDAV_ENDPOINT=http://127.0.0.1:$HPORT/sccache"
for b in redis http; do
  if sc_start "$WORK/sccache-probe-$b" "${SC_ENV[$b]}"; then
    loc=$(sc_location)
    case $loc in
      "Local disk"*|"") SC_WHY[$b]="not in this build: ${SC_ENV[$b]%%=*} is ignored (cache location: ${loc%%:*})" ;;
      *) SC_OK[$b]=1 ;;
    esac
  else
    SC_WHY[$b]="not in this build: $SC_STATUS"
  fi
  sc_stop
  say "sccache + $b: ${SC_WHY[$b]:-measured}"
done

CONFIGS=()
for cfg in "10x3:10:host,sm_90,gfx90a" "50x1:50:host"; do
  [[ " $PROJECTS " == *" ${cfg%%:*} "* ]] && CONFIGS+=("$cfg")
done
[ "$QUICK" = 1 ] && CONFIGS=("1x3:1:host,sm_90,gfx90a")
declare -A RUN CC_NOTE
for cfg in "${CONFIGS[@]}"; do
  IFS=: read -r name tus targets <<<"$cfg"
  p=$WORK/p$name
  gen_c "$p" "$tus" "$targets"
  ob="$OB -C $p -j$JOBS -q"
  mk="make -C $p -f Makefile.oneshot -s -j$JOBS"
  ccr="$WORK/ccache-remote-$name"
  say "B9 $name: warming Redis and HTTP (one cold build each), and ccache's remotes"
  $ob --cache-dir "$WORK/w1-$name" --remote-storage "$REDIS" --remote-storage "$HTTP" build
  rm -rf "$p/build"
  for remote in "$REDIS" "http://127.0.0.1:$HPORT/ccache"; do
    rm -rf "$ccr"
    $mk clean >/dev/null
    CCACHE_DIR=$ccr CCACHE_NOHASHDIR=1 CCACHE_REMOTE_STORAGE=$remote $mk CC="ccache $CLANG" >/dev/null
  done
  $mk clean >/dev/null
  # What a fresh clone with an empty local cache runs (commands) from each remote.
  RUN[$name-redis]=$($OB -C "$p" -j$JOBS --cache-dir "$WORK/probe-r-$name" --remote-storage "$REDIS" build 2>&1 |
    grep -oE '[0-9]+ run in' | grep -oE '^[0-9]+')
  rm -rf "$p/build"
  RUN[$name-http]=$($OB -C "$p" -j$JOBS --cache-dir "$WORK/probe-h-$name" --remote-storage "$HTTP" build 2>&1 |
    grep -oE '[0-9]+ run in' | grep -oE '^[0-9]+')
  rm -rf "$p/build"
  say "B9 $name: $REPS run(s) each"
  hf "B9-$name" "$REPS" \
    -n oneshot --prepare "$mk clean" "$mk" \
    -n cold --prepare "rm -rf $p/build $WORK/c-$name" "$ob --cache-dir $WORK/c-$name build" \
    -n ob_redis --prepare "rm -rf $p/build $WORK/c-$name" "$ob --cache-dir $WORK/c-$name --remote-storage $REDIS build" \
    -n ob_http --prepare "rm -rf $p/build $WORK/c-$name" "$ob --cache-dir $WORK/c-$name --remote-storage $HTTP build" \
    -n ccache_redis --prepare "$mk clean && rm -rf $ccr" \
    "CCACHE_DIR=$ccr CCACHE_NOHASHDIR=1 CCACHE_REMOTE_STORAGE=$REDIS $mk CC='ccache $CLANG'" \
    -n ccache_http --prepare "$mk clean && rm -rf $ccr" \
    "CCACHE_DIR=$ccr CCACHE_NOHASHDIR=1 CCACHE_REMOTE_STORAGE=http://127.0.0.1:$HPORT/ccache $mk CC='ccache $CLANG'"
  # What ccache got from Redis in one more such build.
  rm -rf "$ccr"
  $mk clean >/dev/null
  CCACHE_DIR=$ccr CCACHE_NOHASHDIR=1 CCACHE_REMOTE_STORAGE=$REDIS $mk CC="ccache $CLANG" >/dev/null
  CC_NOTE[$name]=$(CCACHE_DIR=$ccr ccache --print-stats | awk -F'\t' '$1=="remote_storage_hit"{h=$2} $1=="cache_miss"{m=$2} END{printf "%d remote hits, %d misses", h, m}')
  $mk clean >/dev/null
  # sccache: its own server per backend, warmed by one build; it keeps no
  # local copy beside a remote, so every timed build asks the server.
  for b in redis http; do
    [ "${SC_OK[$b]:-}" = 1 ] || continue
    if ! sc_start "$WORK/sccache-$b-$name" "${SC_ENV[$b]}"; then
      SC_NOTE[$b-$name]="did not start: $SC_STATUS"
      continue
    fi
    $mk CC="sccache $CLANG" >/dev/null
    $mk clean >/dev/null
    sc_zero
    say "B9 $name: sccache + $b, $REPS run(s)"
    hf "B9-$name" "$REPS" -n "sccache_$b" --prepare "$mk clean" "$mk CC='sccache $CLANG'"
    SC_NOTE[$b-$name]="$(sc_stats "$REPS"), from $(sc_location)"
    sc_stop
    $mk clean >/dev/null
  done
done

# Unreachable remotes on a clean rebuild with a warm local cache (10x3).
dead=${CONFIGS[0]%%:*}
p=$WORK/p$dead c=$WORK/warm-local
if [ "$DEAD" = 1 ]; then
$OB -C "$p" -j$JOBS -q --cache-dir "$c" build
say "B9: unreachable remotes on a warm local cache, $REPS run(s) each"
hf "B9-dead" "$((REPS * 3))" \
  -n none --prepare "rm -rf $p/build" "$OB -C $p -j$JOBS -q --cache-dir $c build" \
  -n refused --prepare "rm -rf $p/build" "$OB -C $p -j$JOBS -q --cache-dir $c --remote-storage redis://127.0.0.1:$REFUSED build" \
  -n blackhole --prepare "rm -rf $p/build" "$OB -C $p -j$JOBS -q --cache-dir $c --remote-storage http://127.0.0.1:$BPORT/x build"
# And with an empty local cache: every lookup would go to the remote.
hf "B9-deadcold" "$REPS" \
  -n none --prepare "rm -rf $p/build $WORK/e" "$OB -C $p -j$JOBS -q --cache-dir $WORK/e build" \
  -n refused --prepare "rm -rf $p/build $WORK/e" "$OB -C $p -j$JOBS -q --cache-dir $WORK/e --remote-storage redis://127.0.0.1:$REFUSED build" \
  -n blackhole --prepare "rm -rf $p/build $WORK/e" "$OB -C $p -j$JOBS -q --cache-dir $WORK/e --remote-storage http://127.0.0.1:$BPORT/x build"
fi

# sc_b9_cell BACKEND KEY: sccache's time and offload-build's speedup over it, or why none.
sc_b9_cell() {
  if [ "${SC_OK[$1]:-}" != 1 ]; then echo "n/a: not in this sccache build"; return; fi
  local t=${M[$2/sccache_$1]:-} o=${M[$2/ob_$1]:-}
  echo "$(ms "$t") (offload-build $(speedup "$t" "$o") faster)"
}

section() {
  echo "## B9: remote storage: a fresh clone with an empty local cache and a warm remote"
  echo
  echo "Written by \`bench/b9.sh\` ($REPS runs each; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)."
  echo "A private redis-server $(redis-server --version | grep -oE 'v=[0-9.]+' | cut -c3-) and nginx $(nginx -v 2>&1 | grep -oE '[0-9.]+$')"
  echo "(WebDAV) on 127.0.0.1, filled by one cold build. Each timed offload-build run starts with"
  echo "no build directory and an empty local cache (\`--remote-storage\` names the server), so every"
  echo "job is looked up remotely, verified, written to the local cache and restored. ccache"
  echo "$(ccache --version | head -1 | grep -oE '[0-9.]+$') gets the same: an empty local cache, \`remote_storage\` on the same server"
  echo "(its own keys), warmed once; one-shot clang and the cold build are the reference."
  echo "sccache $(sccache --version 2>/dev/null | grep -oE '[0-9][^ ]*$' || echo "(not installed)") would get the same servers: its Redis backend (\`SCCACHE_REDIS\`) and its WebDAV backend"
  echo "(\`SCCACHE_WEBDAV_ENDPOINT\`, nginx), each tried first; a backend this build lacks is"
  echo "recorded below instead of a time. sccache keeps no local copy beside a remote: its timed"
  echo "builds (server running, warmed once) all ask the server."
  echo
  echo "| project | one-shot clang | cold build | offload-build + Redis | + HTTP | ccache + Redis | ccache + HTTP | sccache + Redis | sccache + HTTP | Redis vs one-shot | Redis vs ccache | HTTP vs one-shot | HTTP vs ccache | commands run (Redis, HTTP) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for cfg in "${CONFIGS[@]}"; do
    IFS=: read -r name _ _ <<<"$cfg"
    k=B9-$name
    echo "| $name | $(ms "${M[$k/oneshot]:-}") | $(ms "${M[$k/cold]:-}") | $(ms "${M[$k/ob_redis]:-}") | $(ms "${M[$k/ob_http]:-}") | $(ms "${M[$k/ccache_redis]:-}") | $(ms "${M[$k/ccache_http]:-}") | $(sc_b9_cell redis "$k") | $(sc_b9_cell http "$k") | $(speedup "${M[$k/oneshot]:-}" "${M[$k/ob_redis]:-}") | $(speedup "${M[$k/ccache_redis]:-}" "${M[$k/ob_redis]:-}") | $(speedup "${M[$k/oneshot]:-}" "${M[$k/ob_http]:-}") | $(speedup "${M[$k/ccache_http]:-}" "${M[$k/ob_http]:-}") | ${RUN[$name-redis]:-?}, ${RUN[$name-http]:-?} |"
  done
  echo
  echo "Target: >= 5x faster than one-shot clang and faster than ccache on the same server."
  echo
  echo "ccache caches compiles, not links: each of its builds runs the offload link"
  echo "(clang-linker-wrapper) again, while offload-build serves the link from the cache too."
  for cfg in "${CONFIGS[@]}"; do
    IFS=: read -r name _ _ <<<"$cfg"
    echo "ccache in one more $name build from Redis: ${CC_NOTE[$name]:-n/a}."
    for b in redis http; do
      if [ -n "${SC_NOTE[$b-$name]:-}" ]; then echo "sccache + $b in the timed $name builds: ${SC_NOTE[$b-$name]}."; fi
    done
  done
  for b in redis http; do
    if [ -n "${SC_WHY[$b]:-}" ]; then echo "sccache + $b: ${SC_WHY[$b]}."; fi
  done
  [ "$DEAD" = 1 ] || return 0
  echo
  echo "The cost of an unreachable remote ($dead): \`redis://\` on a port nothing listens on"
  echo "(connection refused), and \`http://\` to a listener that accepts and never answers"
  echo "(default timeouts: connect 100 ms, operation 2 s)."
  echo
  echo "| local cache | no remote | refused | never answers |"
  echo "|---|---|---|---|"
  echo "| warm (clean rebuild: every job a local hit) | $(ms "${M[B9-dead/none]:-}") | $(ms "${M[B9-dead/refused]:-}") | $(ms "${M[B9-dead/blackhole]:-}") |"
  echo "| empty (every job looked up, then built) | $(ms "${M[B9-deadcold/none]:-}") | $(ms "${M[B9-deadcold/refused]:-}") | $(ms "${M[B9-deadcold/blackhole]:-}") |"
  echo
  echo "A warm local cache never contacts the remote (it is only asked after a local miss, and"
  echo "connected on first use). With misses, a refused connection costs one failed connect, a"
  echo "silent server one operation timeout; then the remote is off for the rest of the build."
}

if [ -n "$SECTION" ]; then
  section >"$SECTION"
else
  section >"$WORK/b9.md"
  replace_section B9 "$OUT" "$WORK/b9.md"
  say "wrote the B9 section of $OUT"
fi
