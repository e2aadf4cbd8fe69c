/* @NAME@: y = a*x + y on the offload device, checked on the host.
 *
 * The target region below runs on the device the manifest's "targets" name.
 * "host" is x86_64 as an offload device: the kernel goes through the offload
 * runtime (libomptarget) on this CPU, so the whole pipeline runs and can be
 * checked without a GPU: `offload-build run --verify`. */
#include <math.h>
#include <omp.h>
#include <stdio.h>

#define N (1 << 16)

static float x[N], y[N];

int main(void) {
  const float a = 2.0f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }

  int on_host = 1; /* set by the target region */
#pragma omp target teams distribute parallel for map(to: x[0:N]) map(tofrom: y[0:N]) \
    map(from: on_host)
  for (int i = 0; i < N; i++) {
    if (i == 0)
      on_host = omp_is_initial_device();
    y[i] = a * x[i] + y[i];
  }

  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += fabsf(y[i] - (a * (float)i + 1.0f)) > 0.0f;
  printf("@NAME@: n=%d y[10]=%.1f mismatches=%d on_device=%s %s\n", N, y[10], bad,
         on_host ? "no" : "yes", bad == 0 ? "OK" : "FAIL");
  return bad == 0 ? 0 : 1;
}
