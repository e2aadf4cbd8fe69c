// A scanned crate's device kernels: what the checks and the host device's image link use.
#include <algorithm>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"

namespace ob::toolchain::rust {

std::vector<const FnItem*> device_kernels(const CrateScan& scan) {
  std::vector<const FnItem*> out;
  for (const auto& f : scan.functions) {
    const bool launched = std::any_of(scan.launches.begin(), scan.launches.end(),
                                      [&](const Launch& l) { return l.kernel == f.name; });
    if (f.offload_kernel || launched) out.push_back(&f);
  }
  return out;
}

std::vector<std::string> device_kernel_symbols(const CrateScan& scan) {
  std::vector<std::string> out;
  for (const FnItem* f : device_kernels(scan))
    if (f->no_mangle) out.push_back(f->name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ob::toolchain::rust
