#!/usr/bin/env bash
# Docs that drifted before (issue 20 item 10): the README's "Keys:" list names
# every key of config/offload.schema.json, and docs/MANIFEST.md's extension
# table is one table (no blank line splitting off a row).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$root" <<'PY'
import json, re, sys
root = sys.argv[1]
schema = json.load(open(f"{root}/config/offload.schema.json"))
readme = open(f"{root}/README.md").read()
m = re.search(r"^Keys: (.*?)\n\n", readme, re.S | re.M)
if not m: sys.exit("FAIL: README.md has no 'Keys:' paragraph")
named = set(re.findall(r"`([^`]+)`", m.group(1)))
missing = [k for k in schema["properties"] if k not in named]
if missing: sys.exit(f"FAIL: README.md's Keys: list misses {missing}")
manifest = open(f"{root}/docs/MANIFEST.md").read()
t = re.search(r"^\| Extension \| Language \|\n((?:\|.*\n)+)", manifest, re.M)
if not t: sys.exit("FAIL: docs/MANIFEST.md has no extension table")
rows = t.group(1)
for ext in ("`.c`", "`.cpp`", "`.rs`", "anything else"):
    if ext not in rows: sys.exit(f"FAIL: {ext} is not a row of docs/MANIFEST.md's extension table")
print("docs_test: ok")
PY
