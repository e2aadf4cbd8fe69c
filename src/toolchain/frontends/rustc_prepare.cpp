// Before a Rust build is planned: the kernel check (no compiler needed), then the
// rustc and its flavour, then whether a GPU device crate has a `core` to use.
#include <iostream>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::rustc {

Result<fs::path> device_stub() {
  if (auto stub = find_support_file("rust-device-stub.ll")) return *stub;
  return Error::failure(
      "rust-device-stub.ll, which offload-build links into every Rust host-device image, is "
      "neither next to the offload-build program nor in <prefix>/lib/offload-build: reinstall "
      "offload-build (cmake --install) or run it from its build directory");
}

Result<void> prepare(Manifest& m, Toolchain& tc, bool verbose) {
  const rust::CrateScan scan = rust::scan_crate(m.sources.front().path);
  OB_TRY(rust::check_crate(scan, m.device_cfg, m.project_dir));
  m.rust_kernels = rust::device_kernel_symbols(scan);
  bool host_device = false;
  for (const auto& t : m.targets) host_device |= needs_device_link(t);
  if (host_device) {
    auto stub = device_stub();
    if (!stub) return stub.error();
    tc.rust_device_stub = *stub;
  }
  auto rust = rust::find_rust_toolchain(m.rustc);
  if (!rust) return rust.error();
  tc.rust = *rust;
  if (verbose) std::cerr << "offload-build: rust: " << rust->describe() << '\n' << std::flush;
  return rust::check_device_core(scan, m.targets, rust->sysroot(), m.device_cfg);
}

}  // namespace ob::rustc
