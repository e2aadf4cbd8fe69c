// vector-cxx: interface between the host driver (main.cpp) and the offload TUs.
#pragma once

#ifndef VEC_N
#error "VEC_N must be defined (the offload.json manifest sets it via \"defines\")"
#endif

namespace vec {

constexpr int n = VEC_N;

// src/axpy.cpp: y = a*x + y on the offload device (declare-target templates).
void axpy(int n, float a, const float *x, float *y);
void axpy(int n, double a, const double *x, double *y);

// src/reduce.cpp: sum(x[i]*y[i]) on the offload device (reduction).
double dot(int n, const double *x, const double *y);

// src/main.cpp (host only): counts target-region launches and records whether
// any of them ran on the host (initial device) instead of an offload device.
int launches();
bool any_on_host();
void note_launch(bool on_initial_device);

} // namespace vec
