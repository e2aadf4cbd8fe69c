// Private to src/manifest: the keys and rules that concern Rust crates and the
// rustc toolchain ("toolchain" as an object, "device_cfg", one crate root).
#pragma once

#include "manifest_reader.hpp"
#include "offload_build/manifest/manifest.hpp"

namespace ob::manifest::detail {

// "toolchain": either a string (the LLVM root) or {"llvm": DIR, "rustc": FILE}.
Result<void> read_toolchain(const Reader& r, Manifest& m);

// After the sources are read: "device_cfg", and for a Rust crate the rules that
// keep it one crate (a single crate root, no C sources, cfg-shaped defines).
Result<void> read_rust(const Reader& r, Manifest& m);

}  // namespace ob::manifest::detail
