#!/usr/bin/env bash
# scripts/check_skips.sh on a real ctest run of made-up tests: a pass, a skip
# for an allowed reason, a skip for a reason that is not allowed (something
# setup.sh installs) and a skip without OB_SKIP's reason line.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- output:" >&2; cat "$tmp/check.out" >&2; exit 1; }

cat > "$tmp/CTestTestfile.cmake" <<'CT'
add_test(passes /bin/sh -c "echo fine")
add_test(skips-allowed /bin/sh -c "echo; echo 'OB-TEST-SKIPPED: no nightly rustc with -Zoffload (none here)'")
add_test(skips-setpriv /bin/sh -c "echo 'OB-TEST-SKIPPED: cannot drop privileges with setpriv here: x'")
add_test(skips-by-code /bin/sh -c "exit 77")
set_tests_properties(skips-allowed skips-setpriv PROPERTIES SKIP_REGULAR_EXPRESSION "OB-TEST-SKIPPED:")
set_tests_properties(skips-by-code PROPERTIES SKIP_RETURN_CODE 77)
CT

# check EXPECTED_RC [ctest args...]: ctest, then check_skips.sh into check.out.
check() {
  local want=$1
  shift
  ctest --test-dir "$tmp" "$@" > "$tmp/ctest.out" 2>&1 || true
  local rc=0
  bash "$root/scripts/check_skips.sh" "$tmp" "$tmp/ctest.out" > "$tmp/check.out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || fail "check_skips.sh exited $rc, expected $want ($*)"
}
has() { grep -qF -- "$1" "$tmp/check.out" || fail "no line with: $1"; }

# tests/allowed_skips.txt: the nightly rustc skip is allowed, setpriv is not,
# a skip whose reason is unknown is not.
unset OB_ALLOWED_SKIPS
check 1
has "test: 3 skipped"
has "skipped (allowed): skips-allowed: no nightly rustc with -Zoffload (none here)"
has "skipped, NOT allowed: skips-setpriv: cannot drop privileges with setpriv here: x"
has "skipped, NOT allowed: skips-by-code: no OB-TEST-SKIPPED reason"
has "2 test(s) skipped for a reason this machine should not have"

# OB_ALLOWED_SKIPS replaces the file.
OB_ALLOWED_SKIPS='^no nightly rustc|^cannot drop privileges' check 0 -E skips-by-code
has "test: 2 skipped"
has "skipped (allowed): skips-setpriv"
# ... and set but empty allows nothing.
OB_ALLOWED_SKIPS='' check 1 -R skips-allowed
has "skipped, NOT allowed: skips-allowed"

# Nothing skipped: the count and success.
check 0 -R passes
has "test: 0 skipped"
echo "check_skips_test: ok"
