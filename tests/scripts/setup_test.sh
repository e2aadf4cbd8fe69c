#!/usr/bin/env bash
# scripts/setup.sh without a network: dpkg-query, apt-get and apt-cache are
# shims on PATH that fake what is installed and what apt could install.
#   all installed          -> nothing to do, apt never runs
#   stock Debian 12        -> no LLVM 22 candidate: the commands that add LLVM's
#                             apt repository (the CI template's), exit 1, nothing installed
#   candidates everywhere  -> installs exactly what is missing
#   --demo                 -> the test-only packages are not needed
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- output:" >&2; cat "$tmp/out" >&2; echo "--- apt log:" >&2; cat "$tmp/apt.log" >&2; exit 1; }

mkdir "$tmp/bin"
# installed: one package a line, or "ALL"; no-candidate: one package a line.
cat > "$tmp/bin/dpkg-query" <<'SH'
#!/bin/sh
for p; do :; done
if grep -qx -e ALL -e "$p" "$FAKE/installed"; then printf 'install ok installed'; exit 0; fi
echo "dpkg-query: no packages found matching $p" >&2
exit 1
SH
cat > "$tmp/bin/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >> "$FAKE/apt.log"
SH
cat > "$tmp/bin/apt-cache" <<'SH'
#!/bin/sh
[ "$1" = policy ] || exit 1
echo "$2:"
echo "  Installed: (none)"
if grep -qx -e "$2" "$FAKE/no-candidate"; then echo "  Candidate: (none)"; else echo "  Candidate: 1.0-1"; fi
SH
printf '#!/bin/sh\nexec "$@"\n' > "$tmp/bin/sudo"
chmod +x "$tmp/bin"/*

# run EXPECTED_RC INSTALLED NO_CANDIDATE [setup.sh args]
run() {
  local want=$1 rc=0
  printf '%s\n' $2 > "$tmp/installed"
  printf '%s\n' $3 > "$tmp/no-candidate"
  : > "$tmp/apt.log"
  shift 3
  FAKE=$tmp PATH="$tmp/bin:$PATH" bash "$root/scripts/setup.sh" "$@" > "$tmp/out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || fail "setup.sh $* exited $rc, expected $want"
}
has() { grep -qF -- "$1" "$tmp/$2" || fail "no line in $2 with: $1"; }
hasnt() { ! grep -qF -- "$1" "$tmp/$2" || fail "a line in $2 with: $1"; }

run 0 ALL ""
has "setup: all 43 packages already installed" out
[ ! -s "$tmp/apt.log" ] || fail "apt-get ran although everything is installed"

llvm="clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22 liboffload-22-dev libclang-rt-22-dev"
run 1 "" "$llvm"
has "setup: error: no installable version of clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22 liboffload-22-dev libclang-rt-22-dev in this machine's apt sources" out
has "stock Debian 12 has no LLVM 22" out
key_line="wget -qO- https://apt.llvm.org/llvm-snapshot.gpg.key | sudo tee /etc/apt/trusted.gpg.d/apt.llvm.org.asc >/dev/null"
has "  $key_line" out
grep -qF -- "$key_line" "$root/templates/github-actions.yml" || fail "the template no longer adds the key this way"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
has "  echo \"deb http://apt.llvm.org/$codename/ llvm-toolchain-$codename-22 main\" | sudo tee /etc/apt/sources.list.d/llvm.list" out
has "apt-get update -q" apt.log
hasnt "apt-get install" apt.log

run 0 "" ""
has "apt-get update -q" apt.log
has "apt-get install -y -q --no-install-recommends build-essential cmake" apt.log
has "clang-22" apt.log
has "redis-server nginx python3-jsonschema ccache sccache hyperfine distcc chromium" apt.log

demo_only="build-essential cmake ninja-build pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev
libfmt-dev libssl-dev libxxhash-dev libzstd-dev libhiredis-dev libcurl4-openssl-dev $llvm"
run 0 "$demo_only" "" --demo
has "setup: all 20 packages already installed" out
[ ! -s "$tmp/apt.log" ] || fail "apt-get ran for --demo although its packages are installed"
run 0 "$demo_only" ""
has "apt-get install -y -q --no-install-recommends git catch2 redis-server nginx python3-jsonschema ccache sccache hyperfine distcc chromium" apt.log

run 2 ALL "" --tests
has "unknown argument '--tests'" out
echo "setup_test: ok"
