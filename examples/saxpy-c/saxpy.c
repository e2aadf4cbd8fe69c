/* saxpy-c: one OpenMP target region, self-checking.
 * y = a*x + y computed on the offload device; expected values computed on the host. */
#include <math.h>
#include <omp.h>
#include <stdio.h>

#define N (1 << 20)

static float x[N], y[N], expect[N];

int main(void) {
  const float a = 2.0f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
    expect[i] = a * x[i] + y[i];
  }

  int initial = 1; /* overwritten by the target region */
#pragma omp target teams distribute parallel for map(to: x[0:N]) \
    map(tofrom: y[0:N]) map(from: initial)
  for (int i = 0; i < N; i++) {
    if (i == 0)
      initial = omp_is_initial_device();
    y[i] = a * x[i] + y[i];
  }

  double max_err = 0.0;
  for (int i = 0; i < N; i++) {
    double e = fabs((double)y[i] - (double)expect[i]);
    if (e > max_err)
      max_err = e;
  }
  int ok = max_err == 0.0;
  printf("saxpy: n=%d y[10]=%f max_err=%g %s\n", N, y[10], max_err,
         ok ? "OK" : "FAIL");
  printf("on_device=%s\n", initial ? "no" : "yes");
  return ok ? 0 : 1;
}
