# shellcheck shell=bash disable=SC2034  # SC_STATUS: read by the callers
# sccache beside ccache in bench/run.sh and bench/b9.sh (sourced after
# bench/common.sh). One private sccache server at a time: its own SCCACHE_DIR,
# a free 127.0.0.1 port, run in the foreground so that its PID is known, and
# stopped by sc_stop (the callers' EXIT traps call it, also on failure).
# sccache 0.4 has no base_dir and no direct mode: every lookup preprocesses.

SC_PID=""
SC_STATUS="not started"

# sc_start DIR [VAR=VALUE...]: (re)start the server with its cache in DIR and
# the backend settings given (SCCACHE_REDIS=...). Returns 1 with SC_STATUS
# saying why when sccache is missing or its server does not start (a backend
# this build lacks: "cache type is not enabled").
sc_start() {
  local dir=$1 port _
  shift
  sc_stop
  command -v sccache >/dev/null || { SC_STATUS="sccache not installed"; return 1; }
  mkdir -p "$dir"
  port=$(free_port)
  # No user configuration, no inherited backend, no client-side auto-start
  # of a server we would not know the PID of (the port is ours).
  unset SCCACHE_REDIS SCCACHE_ENDPOINT SCCACHE_BUCKET SCCACHE_MEMCACHED SCCACHE_GCS_BUCKET \
    SCCACHE_GHA_ENABLED SCCACHE_AZURE_CONNECTION_STRING SCCACHE_WEBDAV_ENDPOINT SCCACHE_RECACHE || true
  export SCCACHE_DIR=$dir SCCACHE_SERVER_PORT=$port SCCACHE_IDLE_TIMEOUT=900 SCCACHE_CONF=$dir.no-config.toml
  env "$@" SCCACHE_NO_DAEMON=1 SCCACHE_START_SERVER=1 sccache >"$dir.server.log" 2>&1 &
  SC_PID=$!
  wait_port "$port" "$SC_PID" && { SC_STATUS=ok; return 0; }
  SC_STATUS="the sccache server did not start ($(sccache --version)): $(tr '\n' ' ' <"$dir.server.log" | sed 's/sccache: //g; s/ *$//')"
  sc_stop
  return 1
}

# sc_stop: stop the server sc_start started (politely, then by its PID).
sc_stop() {
  [ -n "$SC_PID" ] || return 0
  sccache --stop-server >/dev/null 2>&1 || true
  kill "$SC_PID" 2>/dev/null || true
  wait "$SC_PID" 2>/dev/null || true
  SC_PID=""
}

sc_zero() { sccache --zero-stats >/dev/null; }

# sc_stats BUILDS: what the server did since the last sc_zero, one line:
# "H hits, M misses, N non-cacheable (reasons) in BUILDS builds" (+ errors).
sc_stats() {
  sccache --show-stats 2>/dev/null | awk -v n="$1" '
    function num() { return $NF + 0 }
    /^Cache hits +[0-9]+$/ { h = num() }
    /^Cache misses +[0-9]+$/ { m = num() }
    /^Non-cacheable (compilations|calls) +[0-9]+$/ { nc += num() }
    /^Unsupported compiler calls +[0-9]+$/ { un = num() }
    /^(Compilation failures|Cache errors|Cache read errors|Cache write errors|Cache timeouts) +[0-9]+$/ { err += num() }
    /^Non-cacheable reasons:/ { r = 1; next }
    r && NF == 0 { r = 0 }
    r { c = $NF; $NF = ""; sub(/ +$/, ""); why = why (why ? "; " : "") $0 ": " c }
    END {
      s = sprintf("%d hits, %d misses, %d non-cacheable", h, m, nc)
      if (why) s = s " (" why ")"
      if (un) s = s sprintf(", %d unsupported compiler", un)
      if (err) s = s sprintf(", %d errors/failures", err)
      printf "%s in %d builds", s, n
    }'
}

# sc_location: where the running server stores ("Local disk: ...", "Redis: ...").
sc_location() { sccache --show-stats 2>/dev/null | sed -n 's/^Cache location *//p'; }
