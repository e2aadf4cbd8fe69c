#pragma once

#include <filesystem>
#include <optional>

#include "offload_build/toolchain/rustc_probe.hpp"

namespace ob::toolchain::rust {

// Fill the probe answers for f.rustc from the memo; false when there is none
// for this exact binary (path, size, mtime) or no memo directory is set.
bool read_probe_memo(RustcFacts& facts);
void write_probe_memo(const RustcFacts& facts);

}  // namespace ob::toolchain::rust
