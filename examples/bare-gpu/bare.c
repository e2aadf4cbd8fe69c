/* bare-gpu: an ompx_bare kernel (no OpenMP device runtime needed on GPUs).
 *
 * out = A*x + y, computed by NB teams of NT threads. On nvptx/amdgcn every
 * thread runs the region body once and picks its element with <gpuintrin.h>.
 * On the x86_64 host device (and in host fallback) the body runs once per
 * host team, and the number of host teams depends on the machine (it is
 * capped by the core count), so the host branch splits the elements by team
 * and the kernel is idempotent anyway: inputs are mapped `to`, the result
 * goes to a separate `from` array, so it is right however often it runs.
 * Asking for more host teams than cores makes libomp print "OMP: Warning #96:
 * Cannot form a team with 8 threads" on stderr; main() turns libomp warnings
 * off so the output is the same on every machine. */
#include <omp.h>
#include <stdio.h>
#if defined(__NVPTX__) || defined(__AMDGPU__)
#include <gpuintrin.h>
#endif

#define NB 8
#define NT 128
#define N (NB * NT)
#define A 2.0f

static float x[N], y[N], out[N];

int main(void) {
  kmp_set_warnings_off(); /* host code: libomp extension, see above */
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
    out[i] = -1.0f;
  }

#pragma omp target teams ompx_bare num_teams(NB) thread_limit(NT) \
    map(to: x, y) map(from: out)
  {
#if defined(__NVPTX__) || defined(__AMDGPU__)
    int i = (int)(__gpu_block_id_x() * __gpu_num_threads_x() + __gpu_thread_id_x());
    if (i < N)
      out[i] = A * x[i] + y[i];
#else
    for (int i = omp_get_team_num(); i < N; i += omp_get_num_teams())
      out[i] = A * x[i] + y[i];
#endif
  }

  int bad = 0;
  double sum = 0.0;
  for (int i = 0; i < N; i++) {
    bad += out[i] != A * x[i] + y[i];
    sum += out[i];
  }
  double expect = (double)A * (N - 1) * N / 2 + N;
  int ok = bad == 0 && sum == expect;
  printf("bare-gpu: n=%d teams=%d threads=%d out[10]=%.1f sum=%.1f expected=%.1f mismatches=%d %s\n",
         N, NB, NT, out[10], sum, expect, bad, ok ? "OK" : "FAIL");
  return ok ? 0 : 1;
}
