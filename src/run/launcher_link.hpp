// Launcher mode's link (launcher_link.cpp): an OpenMP offload link as one
// cached job.
#pragma once

#include <string>
#include <vector>

#include "launcher_compile.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// Run an OpenMP offload link (CMAKE_<LANG>_LINKER_LAUNCHER) as one cached job:
// device links, wrapper and host link served together (`command`, set up as
// `setup`, parsed as `link`). Returns the exit code, or sets `pass_reason`
// and returns -1 when it cannot be.
int cached_link(const LaunchSetup& setup, const toolchain::frontend::LinkRequest& link,
                const std::vector<std::string>& command, const Request& options, std::string& pass_reason);

}  // namespace ob::run
