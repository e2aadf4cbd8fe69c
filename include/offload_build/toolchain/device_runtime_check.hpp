// GPU device objects built with -nogpulib (no OpenMP device runtime installed)
// link only if they call no runtime function. Checking the object right after
// the device compile turns nvlink's "Undefined reference to '__kmpc_target_init'"
// into a message in the user's terms.
#pragma once

#include <filesystem>

#include "offload_build/manifest/target.hpp"
#include "offload_build/util/result.hpp"

namespace ob::toolchain {

// Fail when `object` (an nvptx ELF or amdgcn bitcode file), the device
// object of `source` (as the user names it) for `target`, references the
// OpenMP device runtime. Called for jobs with `forbid_device_runtime_calls`.
Result<void> check_device_object(const manifest::Target& target, const std::filesystem::path& source,
                                 const std::filesystem::path& object);

}  // namespace ob::toolchain
