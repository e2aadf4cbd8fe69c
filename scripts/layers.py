#!/usr/bin/env python3
"""The stage graph: which stage includes which (docs/ARCHITECTURE.md).

  scripts/layers.py           print each stage's includes of other stages
  scripts/layers.py --dot     the same as a Graphviz digraph
  scripts/layers.py --check   exit 1 naming every include of a higher stage

The order is OB_STAGES in src/CMakeLists.txt (lowest first). The build
enforces it too (each stage compiles against a view of include/ without the
higher stages); --check also sees what those views cannot: an include by a
relative path ("../cache/x.hpp") that reaches into another stage's folder,
and a clang driver option spelled in a string outside the frontends
(src/toolchain/frontends/ and its headers are the only code that knows them).
"""
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stages():
    text = (ROOT / "src" / "CMakeLists.txt").read_text()
    m = re.search(r"set\(OB_STAGES ([^)]*)\)", text)
    if not m:
        sys.exit("layers.py: no set(OB_STAGES ...) in src/CMakeLists.txt")
    return m.group(1).split()


def stage_of(path, order):
    rel = path.relative_to(ROOT).parts
    if rel[0] == "src" and len(rel) > 2 and rel[1] in order:
        return rel[1]
    if rel[:2] == ("include", "offload_build") and len(rel) > 3 and rel[2] in order:
        return rel[2]
    return None


def edges(order):
    found = []
    files = [p for d in ("src", "include") for p in (ROOT / d).rglob("*")
             if p.suffix in (".cpp", ".hpp", ".h", ".c")]
    for path in sorted(files):
        src = stage_of(path, order)
        if src is None:
            continue
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if name.startswith("offload_build/"):
                dst = name.split("/")[1]
            else:
                target = (path.parent / name).resolve()
                try:
                    dst = stage_of(target, order)
                except ValueError:
                    dst = None
            if dst in order and dst != src:
                found.append((src, dst, f"{path.relative_to(ROOT)}:{line}", name))
    return found


# A string literal that is one clang driver option of the offload passes
# ("-fopenmp", "-fopenmp-targets=", "-cc1as", "--offload-arch=", ...); a
# message that merely mentions one ("-fopenmp and offload targets ...") is no
# spelling and does not match.
CLANG_FLAG = re.compile(
    r'"(-fopenmp|-fno-openmp|-cc1|--offload-arch|--offload-targets|-Xopenmp-target|'
    r'-emit-llvm|-fembed-offload-object|--offload-host-only|--offload-device-only|'
    r'-fopenmp-is-target-device|-foffload-lto)[^" ]*"')
FRONTENDS = (("src", "toolchain", "frontends"), ("include", "offload_build", "toolchain", "frontends"))


def clang_flags_outside_frontends():
    found = []
    files = [p for d in ("src", "include") for p in (ROOT / d).rglob("*")
             if p.suffix in (".cpp", ".hpp", ".h", ".c")]
    for path in sorted(files):
        rel = path.relative_to(ROOT).parts
        if any(rel[:len(f)] == f for f in FRONTENDS):
            continue
        text = path.read_text(errors="replace")
        for m in CLANG_FLAG.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", m.group(0)))
    return found


def main():
    order = stages()
    found = edges(order)
    rank = {s: i for i, s in enumerate(order)}
    if "--dot" in sys.argv:
        print("digraph stages {\n  rankdir=BT;")
        for (a, b), n in sorted(Counter((a, b) for a, b, _, _ in found).items()):
            print(f'  {a} -> {b} [label="{n}"];')
        print("}")
        return 0
    if "--check" in sys.argv:
        bad = [e for e in found if rank[e[1]] > rank[e[0]]]
        for src, dst, where, name in bad:
            print(f"{where}: error: stage '{src}' includes \"{name}\" of the higher "
                  f"stage '{dst}' (order, lowest first: {' '.join(order)}); move the "
                  f"code down or pass what it needs from above", file=sys.stderr)
        flags = clang_flags_outside_frontends()
        for where, spelled in flags:
            print(f"{where}: error: the clang option {spelled} is spelled outside "
                  f"src/toolchain/frontends; ask a frontend function (clang_flags.hpp, "
                  f"driver_listing.hpp) instead", file=sys.stderr)
        if bad or flags:
            return 1
        print(f"layers: {len(found)} includes between stages, all downward "
              f"({' < '.join(order)}); clang options only in the frontends")
        return 0
    print("stages, lowest first: " + " < ".join(order))
    for s in order:
        uses = Counter(b for a, b, _, _ in found if a == s)
        listed = ", ".join(f"{b} ({n})" for b, n in sorted(uses.items(), key=lambda x: rank[x[0]]))
        print(f"  {s:10} -> {listed or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
