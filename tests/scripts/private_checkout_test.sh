#!/usr/bin/env bash
# Issue #32: the tests pass from a checkout only root can enter (a clone under
# /root, mode 0700, as in many container CI images). Without rebuilding
# anything: in a private mount namespace the checkout's own directory is
# replaced by a tmpfs of mode 0700 holding the checkout's entries (bind mounts),
# so every path the built tests know (the offload-build they run, the
# stable-names library beside it, the examples) stays the same, and no other
# user can reach any of them. Then the tests that run something as another
# user (setpriv --reuid, a distccd that drops privileges) run there: each
# must pass, not skip (a skip here is a failure: these tests must give that
# user what it needs, docs/RELIABILITY.md).
# Usage: private_checkout_test.sh OB_INTEGRATION_TESTS
# Without unshare -m (a container without CAP_SYS_ADMIN) the same tests run
# from copies of the built programs in a 0700 directory (OB_TEST_BINARY).
set -uo pipefail
tests=${1:?usage: private_checkout_test.sh OB_INTEGRATION_TESTS}
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "OB-TEST-SKIPPED: needs root to run tests as another user"
  exit 0
fi
names=(
  "a read-only cache still serves hits with one warning"
  "cache stats and verify on a read-only cache whose v1 is a symlink say so"
  'distcc: plain compiles go through prefix_command\, offload compiles run locally'  # Catch: \, is a comma
)
out=$(mktemp "${TMPDIR:-/tmp}/ob-private-checkout.XXXXXX")
stash=$(mktemp -d "${TMPDIR:-/tmp}/ob-private-stash.XXXXXX")  # 0700
trap 'rm -rf "$out" "$stash"' EXIT

run_all() {  # the tests, each on its own; output in $out
  local status=0
  for name in "${names[@]}"; do
    "$@" "$name" >>"$out" 2>&1 || status=1
  done
  return $status
}

if unshare -m true 2>/dev/null; then
  how="the checkout $root behind a 0700 tmpfs (private mount namespace)"
  # shellcheck disable=SC2016
  unshare -m bash -c '
    set -eu
    root=$1 stash=$2 tests=$3 out=$4; shift 4
    cd /
    mount --make-rprivate /
    mount --bind "$root" "$stash"
    mount -t tmpfs -o mode=0700 ob-private "$root"
    for entry in "$stash"/* "$stash"/.[!.]*; do
      [ -e "$entry" ] || continue
      name=${entry##*/}
      if [ -d "$entry" ]; then mkdir "$root/$name"; else : >"$root/$name"; fi
      mount --bind "$entry" "$root/$name"
    done
    [ "$(stat -c %a "$root")" = 700 ] || { echo "FAIL: $root is not 0700 in the namespace" >&2; exit 1; }
    # nobody cannot reach the offload-build under test: the setting is real.
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$tests"; then
      echo "FAIL: nobody can still reach $tests" >&2; exit 1
    fi
    status=0
    for name in "$@"; do "$tests" "$name" >>"$out" 2>&1 || status=1; done
    exit $status
  ' private "$root" "$stash" "$tests" "$out" "${names[@]}"
  status=$?
else
  how="copies of the built programs in a 0700 directory (no unshare -m here)"
  priv="$stash/checkout/build"
  mkdir -p "$priv/tests"
  bin=$(dirname "$(dirname "$tests")")
  cp "$bin/offload-build" "$bin/libob-stable-names.so" "$priv/"
  cp "$tests" "$priv/tests/"
  export OB_TEST_BINARY="$priv/offload-build"
  run_all "$priv/tests/$(basename "$tests")"
  status=$?
fi
cat "$out"
echo "private checkout: $how"
if grep -q "OB-TEST-SKIPPED" "$out"; then
  echo "FAIL: a test skipped from a private checkout (it must give the other user what it needs)" >&2
  exit 1
fi
if [ "$status" != 0 ]; then
  echo "FAIL: a test failed from a private checkout" >&2
  exit 1
fi
echo "private checkout: ${#names[@]} tests that run as another user pass"
