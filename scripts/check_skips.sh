#!/usr/bin/env bash
# After a ctest run: print how many tests were skipped, which and why, and fail
# when a skip's reason is not allowed. A test skips with OB_SKIP("reason")
# (tests/support/skip.hpp), which prints "OB-TEST-SKIPPED: reason"; CTest then
# reports it as Skipped and keeps its output in Testing/Temporary/LastTest.log.
#   check_skips.sh BUILD_DIR CTEST_OUTPUT
# CTEST_OUTPUT is what ctest printed (its "did not run" list names the skips).
# Allowed reasons: one extended regex per line in tests/allowed_skips.txt (#
# comments), or OB_ALLOWED_SKIPS (one regex, replacing the file; set and empty:
# no skip is allowed). A skipped test whose reason cannot be found is not allowed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check_skips.sh BUILD_DIR CTEST_OUTPUT}
output=${2:?usage: check_skips.sh BUILD_DIR CTEST_OUTPUT}
log=$build/Testing/Temporary/LastTest.log

if [ -n "${OB_ALLOWED_SKIPS+set}" ]; then
  allowed=$OB_ALLOWED_SKIPS
else
  allowed=$(grep -v -e '^#' -e '^[[:space:]]*$' "$root/tests/allowed_skips.txt" | paste -sd '|' || true)
  # Acting as a second user needs root.
  if [ "$(id -u)" -ne 0 ]; then allowed="${allowed:+$allowed|}^needs root"; fi
fi

# "	209 - integration:init --lang rust: ... (Skipped)" -> the test's name.
mapfile -t skipped < <(sed -n 's/^[[:space:]]*[0-9][0-9]* - \(.*\) (Skipped)$/\1/p' "$output")
echo "test: ${#skipped[@]} skipped"
[ ${#skipped[@]} -eq 0 ] && exit 0

bad=0
for name in "${skipped[@]}"; do
  # The first OB-TEST-SKIPPED line inside this test's block of LastTest.log.
  reason=$(awk -v name="$name" '
    /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); inside = ($0 == name); next }
    inside && /^OB-TEST-SKIPPED: / { sub(/^OB-TEST-SKIPPED: /, ""); print; exit }' "$log" 2>/dev/null || true)
  if [ -n "$reason" ] && [ -n "$allowed" ] && printf '%s\n' "$reason" | grep -Eq -- "$allowed"; then
    echo "test:   skipped (allowed): $name: ${reason:0:160}"
  else
    echo "test:   skipped, NOT allowed: $name: ${reason:-no OB-TEST-SKIPPED reason in $log}"
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "test: $bad test(s) skipped for a reason this machine should not have: install what they" \
       "need (scripts/setup.sh), or allow the reason in tests/allowed_skips.txt (OB_ALLOWED_SKIPS)" >&2
  exit 1
fi
