// Before a Rust build is planned: the kernel check (no compiler needed), then the
// rustc and its flavour, then whether a GPU device crate has a `core` to use.
#include <iostream>

#include "offload_build/toolchain/frontends/rust_kernels.hpp"
#include "offload_build/toolchain/frontends/rustc.hpp"

namespace ob::rustc {

Result<void> prepare(const Manifest& m, Toolchain& tc, bool verbose) {
  const rust::CrateScan scan = rust::scan_crate(m.sources.front().path);
  OB_TRY(rust::check_crate(scan, m.device_cfg, m.project_dir));
  auto rust = rust::find_rust_toolchain(m.rustc);
  if (!rust) return rust.error();
  tc.rust = *rust;
  if (verbose) std::cerr << "offload-build: rust: " << rust->describe() << '\n' << std::flush;
  return rust::check_device_core(scan, m.targets, rust->sysroot(), m.device_cfg);
}

}  // namespace ob::rustc
