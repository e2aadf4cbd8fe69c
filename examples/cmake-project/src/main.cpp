#include <omp.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "vecops.hpp"

int main() {
  const int n = 1 << 16;
  std::vector<float> x(n), y(n, 1.0f), in(n), out(n);
  std::vector<double> a(n, 0.5), b(n, 4.0);
  for (int i = 0; i < n; ++i) x[i] = float(i % 100), in[i] = float(i % 3);

  saxpy(2.0f, x.data(), y.data(), n);
  const double d = dot(a.data(), b.data(), n);
  blur3(in.data(), out.data(), n);

  // A target region in this TU too: where did it run?
  int on_device = 0;
#pragma omp target map(from : on_device)
  on_device = !omp_is_initial_device();

  int bad = 0;
  for (int i = 0; i < n; ++i) bad += y[i] != 2.0f * float(i % 100) + 1.0f;
  bad += std::fabs(d - 2.0 * n) > 1e-6;
  bad += std::fabs(out[1] - 1.0f) > 1e-6f;  // (0 + 1 + 2) / 3
  std::printf("vecdemo: y[7]=%.1f dot=%.1f out[1]=%.1f device=%d bad=%d %s\n", y[7], d, out[1],
              on_device, bad, bad == 0 ? "OK" : "FAILED");
  return bad == 0 ? 0 : 1;
}
