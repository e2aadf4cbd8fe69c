#!/usr/bin/env bash
# Every code block the docs mark as compiled builds (issue 20 item 5), so the
# docs cannot drift from the tool. A block is marked by the line
#   <!-- docs-test: KIND [run] -->
# right before its opening fence, in README.md or docs/*.md. KIND:
#   c, cxx       a whole program: offload-build builds it from a manifest
#                (src/main.c or .cpp, target "host")
#   rust         a whole crate root (src/main.rs, --edition=2024), the same way
#   rust-device  items of a device crate (a #[panic_handler], ...): rustc checks
#                them as a #![no_std] library with --cfg offload_device
#                (--emit=metadata)
#   run          after c, cxx or rust: `offload-build run --verify` instead of
#                build, so the program also runs and launches a kernel
# Usage: docs_blocks_test.sh OFFLOAD_BUILD [FILE.md...]. Without files: README.md
# and docs/*.md, then tests/fixtures/docs_blocks/broken.md, which must fail
# (this test can fail). Without a nightly rustc with -Zoffload the Rust blocks
# are skipped, said with the marker CTest reads, once all the others passed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ob=${1:?usage: docs_blocks_test.sh OFFLOAD_BUILD [FILE.md...]}
shift
self_test=0
if [ $# -eq 0 ]; then
  set -- "$root/README.md" "$root"/docs/*.md
  self_test=1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ob-docs-blocks.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The marked blocks: $work/blocks/N (its text) and one line per block in
# $work/list: N, FILE:LINE, KIND, MODE. A marker without a fence after it or
# with an unknown kind is an error, not a block silently left out.
python3 - "$work" "$@" <<'PY' || exit 1
import os, re, sys
work, files = sys.argv[1], sys.argv[2:]
os.makedirs(f"{work}/blocks")
marker = re.compile(r"^<!--\s*docs-test:\s*(\S+)(?:\s+(\S+))?\s*-->\s*$")
n, bad, rows = 0, [], []
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        m = marker.match(line)
        if not m: continue
        kind, mode = m.group(1), m.group(2) or "build"
        where = f"{path}:{i + 1}"
        if kind not in ("c", "cxx", "rust", "rust-device") or mode not in ("build", "run") \
                or (kind == "rust-device" and mode == "run"):
            bad.append(f"{where}: unknown docs-test marker '{line.strip()}' (KIND: c, cxx, rust, rust-device; then optionally run)")
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            bad.append(f"{where}: a docs-test marker must stand right before a code block's opening ```")
            continue
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            bad.append(f"{where}: the code block after the docs-test marker is never closed")
            continue
        n += 1
        open(f"{work}/blocks/{n}", "w").write("\n".join(lines[i + 2:end]) + "\n")
        rows.append(f"{n}\t{path}:{i + 2}\t{kind}\t{mode}")
for b in bad: print(f"docs_blocks: FAIL {b}")
open(f"{work}/list", "w").write("".join(r + "\n" for r in rows))
sys.exit(1 if bad else 0)
PY
if [ ! -s "$work/list" ]; then
  echo "docs_blocks: FAIL no block marked <!-- docs-test: KIND --> in $*"
  exit 1
fi

# The rustc offload-build uses, when it accepts -Zoffload (offload-build doctor says).
doctor=$("$ob" doctor 2>&1)
rust_line=$(grep -m1 '^  rust: ' <<<"$doctor" | sed 's/^  //')
rustc=$(awk '/^Rust$/ {r = 1; next} r && $1 == "rustc" {print $2; exit}' <<<"$doctor")
rust_ok=0
grep -q '^  rust: nightly rustc .* accepts -Zoffload' <<<"$doctor" && [ -x "$rustc" ] && rust_ok=1

failed=0 skipped=0 passed=0
while IFS=$'\t' read -r n where kind mode; do
  rel=${where#"$root/"}
  dir="$work/p$n"
  mkdir -p "$dir/src"
  case "$kind" in
    c | cxx | rust)
      if [ "$kind" = rust ] && [ "$rust_ok" = 0 ]; then skipped=$((skipped + 1)); continue; fi
      ext=$kind; [ "$kind" = cxx ] && ext=cpp; [ "$kind" = rust ] && ext=rs
      flags='[]'; [ "$kind" = rust ] && flags='["--edition=2024"]'
      cp "$work/blocks/$n" "$dir/src/main.$ext"
      printf '{"name": "docblock", "sources": ["src/main.%s"], "targets": ["host"], "flags": %s}\n' \
        "$ext" "$flags" >"$dir/offload.json"
      cmd=(build); [ "$mode" = run ] && cmd=(run --verify)
      "$ob" -C "$dir" --cache-dir "$work/cache" "${cmd[@]}" >"$dir/log" 2>&1
      ;;
    rust-device)
      if [ "$rust_ok" = 0 ]; then skipped=$((skipped + 1)); continue; fi
      { echo '#![no_std]'; cat "$work/blocks/$n"; } >"$dir/src/lib.rs"
      "$rustc" --edition=2024 --crate-type=lib --crate-name=docblock --cfg offload_device -Cpanic=abort \
        --emit=metadata -o "$dir/docblock.rmeta" "$dir/src/lib.rs" >"$dir/log" 2>&1
      ;;
  esac
  if [ $? -eq 0 ]; then
    passed=$((passed + 1))
    echo "docs_blocks: ok   $rel ($kind $mode)"
  else
    failed=$((failed + 1))
    echo "docs_blocks: FAIL $rel ($kind $mode) does not $( [ "$mode" = run ] && echo "build and run --verify" || echo compile):"
    tail -n 30 "$dir/log" | sed 's/^/    /'
  fi
done <"$work/list"

if [ "$failed" != 0 ]; then
  echo "docs_blocks: $failed of $((failed + passed + skipped)) marked blocks fail; fix the docs (or the tool)"
  exit 1
fi
if [ "$self_test" = 1 ]; then
  # This test can fail: a marked block that does not compile fails it (and
  # one that builds and launches its kernel passes).
  if out=$(bash "$0" "$ob" "$root/tests/fixtures/docs_blocks/broken.md" 2>&1) ||
     ! grep -q 'docs_blocks: ok   .*broken.md:[0-9]* (c run)' <<<"$out" ||
     ! grep -q 'docs_blocks: FAIL .*broken.md:[0-9]* (c build) does not compile' <<<"$out"; then
    echo "docs_blocks: FAIL the self-test on tests/fixtures/docs_blocks/broken.md (a block that runs, one that does not compile):"
    sed 's/^/    /' <<<"$out"
    exit 1
  fi
  echo "docs_blocks: ok   a broken block fails (tests/fixtures/docs_blocks/broken.md)"
fi
echo "docs_blocks: $passed marked blocks compile"
if [ "$skipped" != 0 ]; then
  echo "OB-TEST-SKIPPED: no nightly rustc with -Zoffload (offload-build doctor: ${rust_line:-no rust line}); $skipped Rust blocks not compiled"
fi
exit 0
