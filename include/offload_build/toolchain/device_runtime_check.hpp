// GPU device objects built with -nogpulib (no OpenMP device runtime installed)
// link only if they call no runtime function. Checking the object right after
// the device compile turns nvlink's "Undefined reference to '__kmpc_target_init'"
// into a message in the user's terms.
#pragma once

#include <filesystem>

#include "offload_build/plan/plan.hpp"
#include "offload_build/util/result.hpp"

namespace ob {

// For a job with `forbid_device_runtime_calls`, fail when `object` (an nvptx
// ELF or amdgcn bitcode file) references the OpenMP device runtime.
Result<void> check_device_object(const Job& job, const std::filesystem::path& object,
                                 const std::filesystem::path& cwd);

}  // namespace ob
