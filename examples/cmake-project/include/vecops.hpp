// Vector kernels, each an OpenMP target region in its own translation unit.
#pragma once

void saxpy(float a, const float* x, float* y, int n);  // y = a*x + y      (saxpy.cpp)
double dot(const double* a, const double* b, int n);    // sum a[i]*b[i]    (reduce.cpp)

extern "C" {
void blur3(const float* in, float* out, int n);  // 3-point average, ends copied (stencil.c)
}
