#include "vecops.hpp"

double dot(const double* a, const double* b, int n) {
  double sum = 0.0;
#pragma omp target teams distribute parallel for map(to : a[0:n], b[0:n]) reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}
