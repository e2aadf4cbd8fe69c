// What the host device's image link needs to know about a scanned crate.
#include <algorithm>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::rust {

std::vector<std::string> device_kernel_symbols(const CrateScan& scan) {
  std::vector<std::string> out;
  for (const auto& f : scan.functions) {
    const bool launched = std::any_of(scan.launches.begin(), scan.launches.end(),
                                      [&](const Launch& l) { return l.kernel == f.name; });
    if ((f.offload_kernel || launched) && f.no_mangle) out.push_back(f.name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ob::rust
