// Before a Rust build is planned: the kernel check (no compiler needed), then the
// rustc and its flavour, then whether a GPU device crate has a `core` to use.
#include <algorithm>
#include <iostream>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"
#include "offload_build/toolchain/stable_names.hpp"

namespace ob::toolchain::rustc {

Result<void> find_device_stub(const std::vector<manifest::Target>& targets, Toolchain& tc) {
  if (std::none_of(targets.begin(), targets.end(), needs_device_link)) return {};
  tc.rust_device_stub = find_support_file("rust-device-stub.ll");
  if (tc.rust_device_stub) return {};
  return Error::failure(
      "rust-device-stub.ll, which offload-build links into every Rust host-device image, is "
      "neither next to the offload-build program nor in <prefix>/lib/offload-build: reinstall "
      "offload-build (cmake --install) or run it from its build directory");
}

Result<void> prepare(manifest::Manifest& m, Toolchain& tc, bool verbose) {
  const rust::CrateScan scan = rust::scan_crate(m.sources.front().path);
  OB_TRY(rust::check_crate(scan, m.device_cfg, m.project_dir));
  OB_TRY(rust::check_kernel_abi(scan, m.targets, m.device_cfg, m.project_dir));
  OB_TRY(find_device_stub(m.targets, tc));
  auto rust = rust::find_rust_toolchain(m.rustc, m.project_dir);
  if (!rust) return rust.error();
  tc.rust = *rust;
  if (verbose) std::cerr << "offload-build: rust: " << rust->describe() << '\n' << std::flush;
  return rust::check_device_core(scan, m.targets, rust->sysroot(), m.device_cfg);
}

}  // namespace ob::toolchain::rustc
