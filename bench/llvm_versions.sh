#!/usr/bin/env bash
# B1/B2 for generic OpenMP kernels (`target teams distribute parallel for`,
# calling the device runtime) with LLVM 19 from its private prefix
# (scripts/setup.sh --llvm 19), beside the same project's bare-kernel build
# with LLVM 22 (the only GPU code LLVM 22 builds here): a cold build and a
# clean rebuild with a warm cache, against one-shot clang of the same LLVM
# under make -j2 and, for the rebuild, ccache.
#   bench/llvm_versions.sh [--reps N] [--tus N] [--section FILE]
# OFFLOAD_BUILD names the binary (default build-bench/offload-build).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPS=3 TUS=10 SECTION=""
while [ $# -gt 0 ]; do
  case $1 in
    --reps) REPS=$2; shift 2 ;;
    --tus) TUS=$2; shift 2 ;;
    --section) SECTION=$2; shift 2 ;;
    *) echo "llvm_versions: unknown argument $1" >&2; exit 2 ;;
  esac
done
OB=${OFFLOAD_BUILD:-$ROOT/build-bench/offload-build}
R19=$(bash "$ROOT/scripts/llvm-prefix.sh" 19 | tail -1)
R22=/usr/lib/llvm-22
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
bench_setup llvm_versions hyperfine make ccache "$OB" "$R19/bin/clang"
JOBS=2
TARGETS=host,sm_90,gfx90a
declare -A IMAGES RUN
export PATH=/usr/local/cuda/bin:$PATH  # ptxas and nvlink for sm_90

# kernel K KIND: one TU's kernel: generic (a target region calling the
# device runtime) or bare (ompx_bare, what LLVM 22 builds for a GPU here).
kernel() {
  if [ "$2" = generic ]; then
    printf 'void k%s(float* y, const float* x, int n) {\n' "$1"
    printf '#pragma omp target teams distribute parallel for map(tofrom: y[0:n]) map(to: x[0:n])\n'
    printf '  for (int i = 0; i < n; i++) y[i] += (%s.0f + 1.0f) * x[i];\n}\n' "$1"
  else
    printf '#include <gpuintrin.h>\nvoid k%s(float* y, const float* x, int n) {\n' "$1"
    printf '#pragma omp target teams ompx_bare num_teams(1) thread_limit(1) map(tofrom: y[0:n]) map(to: x[0:n])\n'
    printf '  for (int i = 0; i < n; i++) y[i] += (%s.0f + 1.0f) * x[i];\n}\n' "$1"
  fi
}

# gen DIR ROOT KIND: TUS sources, an offload.json for ROOT, a one-shot Makefile.
gen() {
  local dir=$1 root=$2 kind=$3 k
  mkdir -p "$dir/src"
  for ((k = 0; k < TUS; k++)); do kernel "$k" "$kind" >"$dir/src/tu_$k.c"; done
  {
    echo '#include <stdio.h>'
    for ((k = 0; k < TUS; k++)); do echo "void k$k(float*, const float*, int);"; done
    echo 'int main(void) { float x[64], y[64]; for (int i = 0; i < 64; i++) { x[i] = 1; y[i] = 0; }'
    for ((k = 0; k < TUS; k++)); do echo "  k$k(y, x, 64);"; done
    echo '  printf("y[0]=%.1f\n", y[0]); return 0; }'
  } >"$dir/src/main.c"
  printf '{"name": "b", "output": "b", "sources": ["src/*.c"], "targets": ["host", "sm_90", "gfx90a"],\n "flags": ["-O2"], "toolchain": "%s"}\n' "$root" >"$dir/offload.json"
  # One-shot clang of that LLVM: what its driver needs for these targets.
  local flags="-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda,amdgcn-amd-amdhsa -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90 -Xopenmp-target=amdgcn-amd-amdhsa -march=gfx90a"
  local cflags lflags=$flags
  if [ "$kind" = generic ]; then
    cflags="$flags --libomptarget-nvptx-bc-path=$root/lib -Xopenmp-target=amdgcn-amd-amdhsa -nogpulib"
  else
    cflags="$flags -nogpulib" lflags="$flags -nogpulib"
  fi
  {
    echo "CC = $root/bin/clang"
    echo 'SRCS = $(wildcard src/*.c)'
    echo 'OBJS = $(SRCS:src/%.c=oneshot/%.o)'
    echo 'oneshot/b: $(OBJS)'
    printf '\t$(CC) %s -fuse-ld=lld $^ -o $@\n' "$lflags"
    echo 'oneshot/%.o: src/%.c | oneshot'
    printf '\t$(CC) -O2 %s -c $< -o $@\n' "$cflags"
    echo 'oneshot:'
    printf '\tmkdir -p oneshot\n'
    echo 'clean:'
    printf '\trm -rf oneshot\n'
  } >"$dir/Makefile"
}

for v in 19 22; do
  root=$R19 kind=generic
  [ "$v" = 22 ] && root=$R22 kind=bare
  p=$WORK/p$v c=$WORK/c$v cc=$WORK/cc$v
  gen "$p" "$root" "$kind"
  ob="$OB -C $p --cache-dir $c -j$JOBS -q build"
  mk="make -C $p -s -j$JOBS"
  say "LLVM $v ($kind kernels, $TUS TUs, $TARGETS): B1 cold, B2 warm, $REPS run(s) each"
  hf "B1-$v" "$REPS" -n oneshot --prepare "$mk clean" "$mk" -n ob --prepare "rm -rf $p/build $c" "$ob"
  rm -rf "$p/build"
  $ob
  CCACHE_DIR=$cc $mk clean >/dev/null
  CCACHE_DIR=$cc $mk CC="ccache $root/bin/clang" >/dev/null
  hf "B2-$v" "$REPS" -n ccache --prepare "$mk clean" "CCACHE_DIR=$cc $mk CC='ccache $root/bin/clang'" \
    -n ob --prepare "rm -rf $p/build" "$ob"
  IMAGES[$v]=$("$root/bin/llvm-objdump" --offloading "$p/build/b" | grep -c 'OFFLOADING IMAGE')
  RUN[$v]=$(env LD_LIBRARY_PATH="$root/lib" OMP_TARGET_OFFLOAD=MANDATORY "$p/build/b" 2>&1 | tail -1)
done

{
  echo "## LLVM 19 generic kernels beside LLVM 22 bare kernels (bench/llvm_versions.sh)"
  echo
  echo "$TUS TUs, targets $TARGETS, make -j$JOBS and offload-build -j$JOBS; medians of $REPS; CPU = user + sys."
  echo
  echo "| LLVM | kernels | B1 one-shot | B1 offload-build | ratio (CPU) | B2 ccache | B2 offload-build | vs one-shot | vs ccache (CPU) | images | host run |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for v in 19 22; do
    kind=generic
    [ "$v" = 22 ] && kind="ompx_bare"
    echo "| $v | $kind | $(ms "${M[B1-$v/oneshot]}") | $(ms "${M[B1-$v/ob]}") | $(ratio "${M[B1-$v/ob]}" "${M[B1-$v/oneshot]}") ($(ratio "${M[B1-$v/ob/cpu]}" "${M[B1-$v/oneshot/cpu]}")) | $(ms "${M[B2-$v/ccache]}") | $(ms "${M[B2-$v/ob]}") | $(ratio "${M[B2-$v/ob]}" "${M[B1-$v/oneshot]}") | $(ratio "${M[B2-$v/ob]}" "${M[B2-$v/ccache]}") ($(ratio "${M[B2-$v/ob/cpu]}" "${M[B2-$v/ccache/cpu]}")) | ${IMAGES[$v]} | \`${RUN[$v]}\` |"
  done
} >"${SECTION:-/dev/stdout}"
