// @NAME@: the offloaded kernels (src/kernels.cpp).
#pragma once

#include <cstddef>

// y = a*x + y, on the offload device.
void axpy(float a, const float* x, float* y, std::size_t n);

// The sum of x[i] * y[i], reduced on the offload device. Sets *on_device to
// whether the region really ran on an offload device.
double dot(const float* x, const float* y, std::size_t n, bool* on_device);
