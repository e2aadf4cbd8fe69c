// Target regions that use declare-target templates, instantiated for float and double.
#include "vec.hpp"

#include <omp.h>

#pragma omp declare target
template <typename T> struct Axpy {
  T a;
  T operator()(T x, T y) const { return a * x + y; }
};

template <typename T> T apply(const Axpy<T> &f, T x, T y) { return f(x, y); }
#pragma omp end declare target

namespace {

template <typename T> void axpy_impl(int n, T a, const T *x, T *y) {
  int initial = 1;
  const Axpy<T> f{a};
#pragma omp target teams distribute parallel for map(to: x[0:n]) \
    map(tofrom: y[0:n]) map(from: initial)
  for (int i = 0; i < n; i++) {
    if (i == 0)
      initial = omp_is_initial_device();
    y[i] = apply(f, x[i], y[i]);
  }
  vec::note_launch(initial != 0);
}

} // namespace

namespace vec {

void axpy(int n, float a, const float *x, float *y) { axpy_impl<float>(n, a, x, y); }
void axpy(int n, double a, const double *x, double *y) { axpy_impl<double>(n, a, x, y); }

} // namespace vec
