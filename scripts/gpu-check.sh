#!/usr/bin/env bash
# The prepared GPU check (../shared/research/gpu-runs.md): programs built here
# with LLVM 19 (the LLVM with a GPU OpenMP device runtime) for host and sm_90,
# run on a lent NVIDIA GPU machine with LLVM 19's runtime carried as .debs.
#
#   scripts/gpu-check.sh prepare   (here) build the programs and gather the
#                                  .debs into .gpu/ (git-ignored, < 64 MiB)
#   scripts/gpu-check.sh run       (on the GPU machine, through the device
#                                  tool with carry [".gpu"]) unpack the .debs
#                                  under /tmp, run each program with
#                                  OMP_TARGET_OFFLOAD=MANDATORY LIBOMPTARGET_INFO=-1,
#                                  check the CUDA plugin's launch and the
#                                  output; logs under $OUT (or .gpu/out).
#                                  GPU_CHECK_HOST_OK=1: a launch on the host
#                                  device passes too (the script tried here)
#
# The programs: examples/saxpy-c and examples/vector-cxx from the manifest
# (generic target regions), saxpy-c again from a fresh checkout at another
# path served from the cache, and saxpy-c compiled and linked through the
# launcher as CMake and make call it, and saxpy-c with its compiles executed on
# Bazel's REAPI reference worker. What the GPU machine needs at run time
# (read with ldd): libomptarget.so.19.1 and libomp.so.5 (libomp5-19),
# libLLVM.so.19.1 (libllvm19), libz3.so.4 (libz3-4), ICU 72 (libicu72: the
# GPU machine's Ubuntu has ICU 74); the CUDA driver's libcuda is there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=$root/.gpu
mode=${1:-}

prepare() {
  local r19 ob work
  r19=$(bash "$root/scripts/llvm-prefix.sh" 19 | tail -1)
  ob=${OFFLOAD_BUILD:-$root/build/offload-build}
  [ -x "$ob" ] || { echo "gpu-check: build offload-build first ($ob)" >&2; exit 1; }
  grep -qx '/.gpu/' "$root/.git/info/exclude" 2>/dev/null || echo '/.gpu/' >>"$root/.git/info/exclude"
  rm -rf "$gpu" && mkdir -p "$gpu/debs" "$gpu/bin"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  export PATH=/usr/local/cuda/bin:$PATH OFFLOAD_BUILD_CACHE_DIR=$work/cache
  local example out
  for example in saxpy-c vector-cxx; do
    cp -r "$root/examples/$example" "$work/$example"
    python3 - "$work/$example/offload.json" "$r19" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["toolchain"] = sys.argv[2]; m["targets"] = ["host", "sm_90"]
json.dump(m, open(sys.argv[1], "w"))
PY
    "$ob" -C "$work/$example" -q build
    out=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('output','saxpy'))" "$work/$example/offload.json")
    cp "$work/$example/build/$out" "$gpu/bin/$example"
  done
  # A fresh checkout at another path: every job from the cache.
  cp -r "$root/examples/saxpy-c" "$work/fresh" && cp "$work/saxpy-c/offload.json" "$work/fresh/"
  "$ob" -C "$work/fresh" build 2>&1 | tee "$gpu/fresh-build.txt" | tail -1
  grep -q ' 0 run' "$gpu/fresh-build.txt" || { echo "gpu-check: the fresh checkout ran jobs" >&2; exit 1; }
  cp "$work/fresh/build/saxpy" "$gpu/bin/saxpy-fresh"
  # Through the launcher, as CMake's compiler and linker launcher call it.
  local clang=$r19/bin/clang t=(-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu,nvptx64-nvidia-cuda
    -Xopenmp-target=nvptx64-nvidia-cuda -march=sm_90)
  (cd "$work/saxpy-c" && "$ob" "$clang" -O2 "${t[@]}" "--libomptarget-nvptx-bc-path=$r19/lib" -c saxpy.c -o l.o &&
    "$ob" "$clang" "${t[@]}" l.o -o "$gpu/bin/saxpy-launcher" -lm)
  # Through a REAPI engine: Bazel's reference worker on 127.0.0.1 and a free
  # port, stopped by its pid; the compiles execute there.
  local jars=$work/worker port pid
  NO_SANDBOX=1 bash "$root/tests/support/reapi-worker/build.sh" "$jars" >/dev/null 2>&1 ||
    { echo "gpu-check: the REAPI worker did not build" >&2; exit 1; }
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$jars/start-worker.sh" "$port" "$jars/work" "$jars/cas" --jobs=2 >"$jars/log" 2>&1 &  # exec's the JVM
  pid=$!
  trap '[ -z "${pid:-}" ] || kill "$pid" 2>/dev/null; [ -z "${work:-}" ] || rm -rf "$work"' RETURN EXIT
  local i; for i in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { echo "gpu-check: the REAPI worker exited (see $jars/log)" >&2; exit 1; }; sleep 0.2; done
  cp -r "$root/examples/saxpy-c" "$work/engine" && cp "$work/saxpy-c/offload.json" "$work/engine/"
  OFFLOAD_BUILD_CACHE_DIR=$work/engine-cache "$ob" -C "$work/engine" build \
    --remote-execution "grpc://127.0.0.1:$port" 2>&1 | tee "$gpu/engine-build.txt" | tail -1
  grep -Eq 'remote execution: [3-9] executed' "$gpu/engine-build.txt" ||
    { echo "gpu-check: the engine executed no compile" >&2; exit 1; }
  cp "$work/engine/build/saxpy" "$gpu/bin/saxpy-engine"
  for p in "$gpu"/bin/*; do "$r19/bin/llvm-objdump" --offloading "$p" | grep -q 'arch            sm_90' ||
    { echo "gpu-check: $p has no sm_90 image" >&2; exit 1; }; done
  (cd "$gpu/debs" && apt-get download libomp5-19 libllvm19 libz3-4 libicu72 >/dev/null 2>&1) ||
    { echo "gpu-check: apt-get download failed" >&2; exit 1; }
  du -sh "$gpu"
}

run() {
  local out=${OUT:-$gpu/out} prefix=/tmp/ob-llvm19 fails=0 p log
  mkdir -p "$out" "$prefix"
  for d in "$gpu"/debs/*.deb; do dpkg -x "$d" "$prefix"; done
  # libomp5-19 also links libomp.so.5 into usr/lib/x86_64-linux-gnu: one copy
  # on the search path only, or the program loads two OpenMP runtimes.
  rm -f "$prefix"/usr/lib/x86_64-linux-gnu/lib{omp,iomp5,gomp}*.so*
  # The host plugin opens libomp.so (libomp-19-dev's link, not carried).
  ln -sf libomp.so.5 "$prefix/usr/lib/llvm-19/lib/libomp.so"
  export LD_LIBRARY_PATH=$prefix/usr/lib/llvm-19/lib:$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
  for p in "$gpu"/bin/*; do
    log=$out/$(basename "$p").log
    if OMP_TARGET_OFFLOAD=MANDATORY LIBOMPTARGET_INFO=-1 timeout 120 "$p" >"$log" 2>&1 &&
       grep -q 'OK' "$log" && grep -q 'Launching kernel' "$log" &&
       { grep -qi 'cuda' "$log" || [ "${GPU_CHECK_HOST_OK:-0}" = 1 ]; }; then
      echo "gpu-check: $(basename "$p"): ok: $(grep -m1 -o 'Launching kernel[^ ]* [^ ]*' "$log")"
    else
      echo "gpu-check: $(basename "$p"): FAILED (see $log)"; tail -5 "$log"; fails=$((fails + 1))
    fi
  done
  echo "gpu-check: $fails failed"
  [ "$fails" -eq 0 ]
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu-check.sh prepare|run" >&2; exit 2 ;;
esac
