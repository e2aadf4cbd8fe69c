#!/usr/bin/env python3
"""Room sizes: no function in src/ longer than 100 lines, no hand-written source
file longer than 600, src/cli + include/offload_build/cli within 2,000 lines.

  scripts/sizes.py           print the longest functions and files
  scripts/sizes.py --check   exit 1 naming each one over its limit

A function is a brace block whose header (the text since the previous ';', '{'
or '}') has a parameter list and is not a control statement, a namespace, a
class or an initializer; its length counts the header's first line through the
closing brace. Strings, characters and comments are skipped when braces are
counted. Generated files (under a build directory) are not read.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTION_LIMIT = 100
FILE_LIMIT = 600
CLI_LIMIT = 2000
SUFFIXES = (".cpp", ".hpp", ".h", ".c")
NOT_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|do|else|namespace|struct|class|enum|union|extern|return)\b")


def strip(text):
    """The text with strings, characters and comments blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    text = strip(path.read_text(errors="replace"))
    found = []
    depth = 0
    inside = None  # (depth at which the function opened, header line, name)
    header_start = 0
    for i, c in enumerate(text):
        if c == "{":
            if inside is None:
                header = text[header_start:i]
                flat = " ".join(header.split())
                if ("(" in flat and ")" in flat and not NOT_FUNCTION.match(flat)
                        and not flat.rstrip().endswith("=") and not re.search(r"=\s*$", flat)):
                    lead = len(header) - len(header.lstrip())
                    line = text.count("\n", 0, header_start + lead) + 1
                    name = re.findall(r"([~\w:]+)\s*\(", flat)
                    inside = (depth, line, name[0] if name else "?")
            depth += 1
            header_start = i + 1
        elif c == "}":
            depth -= 1
            if inside is not None and depth == inside[0]:
                end = text.count("\n", 0, i) + 1
                found.append((end - inside[1] + 1, inside[1], inside[2]))
                inside = None
            header_start = i + 1
        elif c == ";":
            header_start = i + 1
    return found


def sources():
    for top in ("src", "include"):
        for p in sorted((ROOT / top).rglob("*")):
            if p.suffix in SUFFIXES and p.is_file():
                yield p


def main(argv):
    check = "--check" in argv
    long_functions, long_files = [], []
    cli_lines = 0
    for path in sources():
        rel = path.relative_to(ROOT)
        lines = path.read_text(errors="replace").count("\n")
        if rel.parts[:2] == ("src", "cli") or rel.parts[:3] == ("include", "offload_build", "cli"):
            cli_lines += lines
        if lines > FILE_LIMIT:
            long_files.append((lines, str(rel)))
        if rel.parts[0] == "src":
            for length, line, name in functions(path):
                if length > FUNCTION_LIMIT:
                    long_functions.append((length, f"{rel}:{line}", name))
    bad = False
    for lines, rel in sorted(long_files, reverse=True):
        print(f"{rel}: {lines} lines (limit {FILE_LIMIT}): split it along its seams")
        bad = True
    for length, where, name in sorted(long_functions, reverse=True):
        print(f"{where}: {name} is {length} lines (limit {FUNCTION_LIMIT}): split it")
        bad = True
    print(f"src/cli + include/offload_build/cli: {cli_lines} lines (limit {CLI_LIMIT})")
    bad = bad or cli_lines > CLI_LIMIT
    if check and bad:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
