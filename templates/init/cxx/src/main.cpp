// @NAME@: host code; the kernels are in src/kernels.cpp.
#include <cstdio>
#include <vector>

#include "kernels.hpp"

int main() {
  const std::size_t n = 1 << 16;
  std::vector<float> x(n), y(n, 1.0f);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 100);

  axpy(2.0f, x.data(), y.data(), n);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += y[i] != 2.0f * x[i] + 1.0f;

  bool on_device = false;
  const double got = dot(x.data(), y.data(), n, &on_device);
  double expect = 0.0;
  for (std::size_t i = 0; i < n; ++i) expect += static_cast<double>(x[i]) * y[i];
  const bool ok = bad == 0 && got == expect;

  std::printf("@NAME@: n=%zu axpy mismatches=%zu dot=%.1f expected=%.1f on_device=%s %s\n", n, bad,
              got, expect, on_device ? "yes" : "no", ok ? "OK" : "FAIL");
  return ok ? 0 : 1;
}
