#!/usr/bin/env bash
# The layers are real: no #include from a stage into a higher one
# (scripts/layers.py --check), and the build's per-stage include views refuse
# one: a file of stage 'toolchain' cannot even find a 'plan' header, while
# the 'plan' view finds it; and only src/config reads the environment. Usage: layers_test.sh CXX STAGE_INCLUDE_DIR
set -euo pipefail
cxx=$1 views=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
python3 "$root/scripts/layers.py" --check
probe='#include "offload_build/plan/plan.hpp"'
if echo "$probe" | "$cxx" -std=c++20 -fsyntax-only -I "$views/toolchain" -x c++ - 2>/dev/null; then
  echo "FAIL: the toolchain stage's include view reaches a plan header" >&2; exit 1
fi
echo "$probe" | "$cxx" -std=c++20 -fsyntax-only -I "$views/plan" \
  $(pkg-config --cflags libxxhash 2>/dev/null) -x c++ - ||
  { echo "FAIL: the plan stage's include view does not reach its own header" >&2; exit 1; }
echo "layers: an upward include does not compile (toolchain -> plan refused)"
# One reader of the environment: the config stage (and the preloaded
# stable-names library, which runs inside the compiler).
if readers=$(grep -rn --include='*.cpp' --include='*.hpp' --include='*.c' 'getenv(' "$root/src" |
             grep -v "^$root/src/config/" | grep -v "^$root/src/preload/"); then
  echo "FAIL: getenv outside src/config (read settings from the Config the CLI resolves, other variables through config::env):" >&2
  echo "$readers" >&2
  exit 1
fi
echo "layers: the environment is read only by src/config"
