// Launcher mode's link (launcher_link.cpp): an OpenMP offload link as one
// cached job.
#pragma once

#include <string>

#include "launcher_run.hpp"
#include "launcher_setup.hpp"

namespace ob::run {

// The plan of an OpenMP offload link (CMAKE_<LANG>_LINKER_LAUNCHER) as one
// cached job: device links, wrapper and host link served together (`link`,
// set up as `setup`); no plan, with `pass_reason`, when it cannot be.
PathAnswer cached_link(const LaunchSetup& setup, const toolchain::frontend::LinkRequest& link,
                       std::string& pass_reason);

}  // namespace ob::run
