// A second offload TU: a dot product with an OpenMP reduction.
#include "vec.hpp"

#include <omp.h>

namespace vec {

double dot(int n, const double *x, const double *y) {
  double sum = 0.0;
  int initial = 1;
#pragma omp target teams distribute parallel for map(to: x[0:n], y[0:n]) \
    map(tofrom: sum) map(from: initial) reduction(+: sum)
  for (int i = 0; i < n; i++) {
    if (i == 0)
      initial = omp_is_initial_device();
    sum += x[i] * y[i];
  }
  note_launch(initial != 0);
  return sum;
}

} // namespace vec
