#!/usr/bin/env bash
# Put Debian's LLVM N (clang, the offload tools, lld, libomp with its GPU
# device runtime and plugins, flang) into a private prefix, beside the LLVM
# that apt installed: `apt-get download` and `dpkg -x`, no dpkg database
# change, so LLVM 22's libomp-22-dev stays (the libomp-N-dev packages conflict
# through apt; ../shared/research/llvm-versions.md).
#   scripts/llvm-prefix.sh N [PREFIX]      (or scripts/setup.sh --llvm N [PREFIX])
# PREFIX defaults to $OFFLOAD_BUILD_TOOLCHAINS/llvm-N, else
# ${XDG_DATA_HOME:-~/.local/share}/offload-build/llvm-N. The .debs stay in
# PREFIX/debs (a GPU machine unpacks them: scripts/gpu-check.sh). Idempotent:
# a complete prefix is left as it is. The last line printed is the toolchain
# root: point offload-build at it ("toolchain" in offload.json,
# OFFLOAD_BUILD_LLVM, or ROOT/bin/clang as the launcher's compiler).
set -euo pipefail

major=${1:-}
case "$major" in
  16 | 19) ;;
  "") echo "llvm-prefix: usage: scripts/llvm-prefix.sh N [PREFIX] (N: 16 or 19)" >&2; exit 2 ;;
  *) echo "llvm-prefix: LLVM $major: only 16 and 19 are in Debian 12's registry with an OpenMP GPU device runtime (22 is installed by scripts/setup.sh)" >&2; exit 2 ;;
esac
base=${OFFLOAD_BUILD_TOOLCHAINS:-${XDG_DATA_HOME:-$HOME/.local/share}/offload-build}
prefix=${2:-$base/llvm-$major}
root=$prefix/usr/lib/llvm-$major
stamp=$prefix/.complete

if [ -f "$stamp" ] && [ -x "$root/bin/clang" ]; then
  echo "llvm-prefix: LLVM $major already in $prefix ($(cat "$stamp"))"
  echo "$root"
  exit 0
fi

packages=(clang-$major clang-tools-$major lld-$major llvm-$major llvm-$major-linker-tools libllvm$major
          libclang-cpp$major libclang1-$major libclang-common-$major-dev libomp-$major-dev libomp5-$major
          flang-$major libflang-$major-dev)
# libclang-rt-N-dev holds the sanitizer runtimes (LLVM 19 only packages it apart).
[ "$major" -ge 17 ] && packages+=(libclang-rt-$major-dev)

# What the unpacked programs load from the system (libllvmN's dependencies).
needed=(libz3-4 libxml2 libedit2 libffi8 libzstd1 zlib1g)
missing=()
for p in "${needed[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  echo "llvm-prefix: installing ${missing[*]} (libllvm$major needs them)"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

mkdir -p "$prefix/debs"
cd "$prefix/debs"
if ! apt-get download "${packages[@]}" >download.log 2>&1; then
  # The package lists may be stale or absent on a fresh machine.
  $SUDO apt-get update -q
  apt-get download "${packages[@]}" >download.log 2>&1 || {
    cat download.log >&2
    echo "llvm-prefix: apt-get download failed for ${packages[*]}" >&2
    exit 1
  }
fi
tmp=$prefix/.unpacking
rm -rf "$tmp"
mkdir -p "$tmp"
for f in ./*.deb; do dpkg -x "$f" "$tmp"; done
# The programs find their libraries through RUNPATH $ORIGIN/../lib
# (usr/lib/llvm-N/lib); Debian keeps libLLVM in usr/lib/x86_64-linux-gnu,
# where only an installed system finds it: link it in, so the prefix runs
# without LD_LIBRARY_PATH.
for lib in "$tmp"/usr/lib/x86_64-linux-gnu/libLLVM*.so.*; do
  [ -e "$lib" ] || continue
  name=$(basename "$lib")
  [ -e "$tmp/usr/lib/llvm-$major/lib/$name" ] || ln -s "../../x86_64-linux-gnu/$name" "$tmp/usr/lib/llvm-$major/lib/$name"
done
rm -rf "$prefix/usr"
mv "$tmp/usr" "$prefix/usr"
rm -rf "$tmp"
"$root/bin/clang" --version >/dev/null || { echo "llvm-prefix: $root/bin/clang does not run" >&2; exit 1; }
version=$("$root/bin/clang" --version | head -1)
echo "$version" >"$stamp"
echo "llvm-prefix: $version in $prefix ($(du -sh "$prefix" | cut -f1)); toolchain root:"
echo "$root"
