#pragma once

#include <filesystem>
#include <optional>

#include "offload_build/toolchain/rustc_probe.hpp"

namespace ob::toolchain::rust {

// Fill the probe answers for f.rustc from the memo; false when there is none
// for this exact binary (path, size, mtime) or no memo directory is set.
bool read_probe_memo(RustcFacts& facts);
void write_probe_memo(const RustcFacts& facts);
// The directory set_probe_memo_dir named (probe::recall's), if any.
const std::optional<fs::path>& probe_memo_dir();

}  // namespace ob::toolchain::rust
