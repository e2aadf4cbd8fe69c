#!/usr/bin/env bash
# Install what offload-build needs from Debian packages (Debian 12).
#   setup.sh          everything: to build, test and benchmark (scripts/test.sh)
#   setup.sh --demo   only what building and installing offload-build and
#                     building its examples needs (scripts/demo.sh)
#   setup.sh --llvm N [PREFIX]
#                     LLVM N (16 or 19: the Debian majors that ship an OpenMP
#                     GPU device runtime) unpacked into PREFIX without apt
#                     (scripts/llvm-prefix.sh; its libomp conflicts with LLVM
#                     22's as packages). Prints the toolchain root to use.
# Idempotent and non-interactive: safe to run again; skips apt when all is
# present. LLVM 22 comes from LLVM's apt repository (apt.llvm.org) on a stock
# Debian 12: without it, this stops and prints the commands that add it.
set -euo pipefail

group=all
case "${1:-}" in
  "") ;;
  --demo) group=demo ;;
  --llvm) shift; exec bash "$(dirname "$0")/llvm-prefix.sh" "$@" ;;
  *) echo "setup: unknown argument '$1'; usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libssl-dev libxxhash-dev libzstd-dev libhiredis-dev libcurl4-openssl-dev
  clang-22 clang-tools-22 lld-22 llvm-22 libomp-22-dev liboffload-22 liboffload-22-dev
)
if [ "$group" = all ]; then
  # The tests (Catch2; remote storage servers; the report's JSON Schema), the
  # sanitizer and fuzz builds (libclang-rt), the benchmarks (hyperfine, ccache,
  # sccache), distributed builds (distcc), the build picture (headless chromium)
  # and MPI compiler wrappers (Open MPI and MPICH, both: tests/integration/test_mpi_wrappers.cpp).
  packages+=(git catch2 libclang-rt-22-dev redis-server nginx python3-jsonschema ccache sccache hyperfine distcc chromium
             openmpi-bin libopenmpi-dev mpich libmpich-dev)
  # Fortran offload compiles through the flang frontend (tests/integration/test_flang.cpp).
  packages+=(flang-22)
  # Remote execution (docs/DISTRIBUTED.md): the gRPC client module (C++ from
  # the REAPI protos bazel-bootstrap-source ships), and for its tests Bazel's
  # reference worker built from bazel-bootstrap-source/-data with a JDK
  # (/work/shared/tools/reapi-worker/build.sh, copied to tests/support/reapi-worker/).
  packages+=(libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
             bazel-bootstrap-source bazel-bootstrap-data default-jdk-headless)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "setup: updating the package lists to install ${missing[*]}"
$SUDO apt-get update -q

# A package apt cannot install (no candidate in any configured source): say
# which, and for LLVM 22 how to add its repository, before installing anything.
no_candidate=()
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then no_candidate+=("$p"); fi
done
if [ ${#no_candidate[@]} -gt 0 ]; then
  echo "setup: error: no installable version of ${no_candidate[*]} in this machine's apt sources" >&2
  llvm=0
  for p in "${no_candidate[@]}"; do case "$p" in *-22 | *-22-dev) llvm=1 ;; esac; done
  if [ "$llvm" = 1 ]; then
    codename=$( (. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}") 2>/dev/null || echo bookworm)
    cat >&2 <<EOF
setup: stock Debian 12 has no LLVM 22; add LLVM's apt repository (as
templates/github-actions.yml does), then run this script again:
  sudo apt-get install -y wget ca-certificates
  wget -qO- https://apt.llvm.org/llvm-snapshot.gpg.key | sudo tee /etc/apt/trusted.gpg.d/apt.llvm.org.asc >/dev/null
  echo "deb http://apt.llvm.org/$codename/ llvm-toolchain-$codename-22 main" | sudo tee /etc/apt/sources.list.d/llvm.list
  sudo apt-get update
EOF
  fi
  exit 1
fi

echo "setup: installing ${missing[*]}"
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
