// Launcher mode's one-step build (launcher_build.cpp).
#pragma once

#include <string>
#include <vector>

#include "launcher_unchanged.hpp"
#include "launcher_compile.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// A one-step build (`clang -fopenmp <targets> a.c b.c -o prog`) split into
// each source's compile (as `-c` would split it) and the cached link, one
// plan (`command`, set up as `setup`, parsed as `build`). Returns the exit
// code; -1 with `why` when it cannot be split.
int split_build(const LaunchSetup& setup, const toolchain::frontend::BuildRequest& build,
                const std::vector<std::string>& command, const Request& options, Unchanged& why);

}  // namespace ob::run
