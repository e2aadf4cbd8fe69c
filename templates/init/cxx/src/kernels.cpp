// @NAME@: each function holds one OpenMP target region. offload-build compiles
// this file once per target in the manifest (the device passes) and once for
// the host, with the device images embedded.
#include "kernels.hpp"

#include <omp.h>

void axpy(float a, const float* x, float* y, std::size_t n) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
  for (std::size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

double dot(const float* x, const float* y, std::size_t n, bool* on_device) {
  double sum = 0.0;
  int initial = 1;
#pragma omp target teams distribute parallel for map(to: x[0:n], y[0:n]) \
    map(tofrom: sum) map(from: initial) reduction(+: sum)
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0) initial = omp_is_initial_device();
    sum += static_cast<double>(x[i]) * y[i];
  }
  *on_device = initial == 0;
  return sum;
}
