#!/usr/bin/env bash
# Fails when a Catch test name cannot be one CTest test: a ';' in it (CMake
# splits it into two tests) or a leading '-' (Catch reads it as an option).
# Arguments: the test binaries.
set -euo pipefail
bad=0
for bin in "$@"; do
  while IFS= read -r name; do
    case "$name" in
      *\;* | -*) echo "test name CTest cannot run: '$name' ($(basename "$bin"))"; bad=1 ;;
    esac
  done < <("$bin" --list-test-names-only)
done
[ "$bad" = 0 ] && echo "test names: all runnable"
exit "$bad"
