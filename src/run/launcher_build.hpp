// Launcher mode's one-step build (launcher_build.cpp).
#pragma once

#include <string>
#include <vector>

#include "launcher_unchanged.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// A one-step build (`clang -fopenmp <targets> a.c b.c -o prog`) split into
// each source's compile (as `-c` would split it) and the cached link, one
// plan. Returns the exit code; -1 with `why` when it is a one-step offload
// build not split, -1 with `why` untouched when it is no one-step build.
int split_build(const std::vector<std::string>& command, const Request& options, Unchanged& why);

}  // namespace ob::run
