// Host-only driver: no target region here. Sets up data, calls the offload
// TUs, checks every result against a host computation, prints deterministic lines.
#include "vec.hpp"

#include <cstdio>
#include <vector>

namespace {
int g_launches = 0;
bool g_any_on_host = false;
} // namespace

namespace vec {
int launches() { return g_launches; }
bool any_on_host() { return g_any_on_host; }
void note_launch(bool on_initial_device) {
  ++g_launches;
  g_any_on_host = g_any_on_host || on_initial_device;
}
} // namespace vec

namespace {

// All values are small integers, so float/double results are exact and the
// reduction's order cannot change the printed sum.
template <typename T> bool check_axpy(const char *label) {
  const int n = vec::n;
  const T a = T(2);
  std::vector<T> x(n), y(n), want(n);
  for (int i = 0; i < n; i++) {
    x[i] = T(i);
    y[i] = T(1);
    want[i] = a * x[i] + y[i];
  }
  vec::axpy(n, a, x.data(), y.data());
  int bad = 0;
  for (int i = 0; i < n; i++)
    bad += y[i] != want[i];
  std::printf("axpy<%s>: y[10]=%.1f y[n-1]=%.1f mismatches=%d %s\n", label,
              double(y[10]), double(y[n - 1]), bad, bad ? "FAIL" : "OK");
  return bad == 0;
}

bool check_dot() {
  const int n = vec::n;
  std::vector<double> x(n), y(n);
  double want = 0.0;
  for (int i = 0; i < n; i++) {
    x[i] = double(i % 1000);
    y[i] = double(i % 7);
    want += x[i] * y[i];
  }
  double got = vec::dot(n, x.data(), y.data());
  bool ok = got == want;
  std::printf("dot<double>: sum=%.1f expected=%.1f %s\n", got, want, ok ? "OK" : "FAIL");
  return ok;
}

} // namespace

int main() {
  std::printf("vector-cxx: n=%d\n", vec::n);
  bool ok = true;
  ok = check_axpy<float>("float") && ok;
  ok = check_axpy<double>("double") && ok;
  ok = check_dot() && ok;
  std::printf("launches=%d on_device=%s\n", vec::launches(), vec::any_on_host() ? "no" : "yes");
  std::printf("vector-cxx: %s\n", ok ? "all OK" : "FAIL");
  return ok ? 0 : 1;
}
