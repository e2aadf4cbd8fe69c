// `offload-build doctor`: what is installed and what that means for the user.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>

namespace ob::toolchain {

// Print every tool found (path and version), device runtimes per triple, visible
// GPUs and a plain-language conclusion per target family. Returns the exit code:
// 0 when the host-device pipeline can build and run, 1 otherwise. `llvm`: the
// llvm setting (find_toolchain).
int run_doctor(const std::optional<std::filesystem::path>& toolchain_hint,
               const std::optional<std::filesystem::path>& llvm, std::ostream& out);

}  // namespace ob::toolchain
