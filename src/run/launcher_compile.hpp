// Launcher mode's compile (launcher_compile.cpp): one offload compile split
// into its plan, or served whole from the cache.
#pragma once

#include <string>
#include <vector>

#include "launcher_run.hpp"
#include "launcher_setup.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

class Session;

// The plan of the offload compile `req` (`command` set up as `setup`), or
// the exit code of one served whole; neither, with `why`, when it cannot be
// split.
PathAnswer split_compile(const LaunchSetup& setup, toolchain::frontend::CompileRequest& req,
                         Session& session, Unchanged& why);

}  // namespace ob::run
