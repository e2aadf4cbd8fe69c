// Launcher mode's one-step build (launcher_build.cpp).
#pragma once

#include "launcher_run.hpp"
#include "launcher_setup.hpp"

namespace ob::run {

class Session;

// The plan of a one-step build (`clang -fopenmp <targets> a.c b.c -o prog`):
// each source's compile (as `-c` would split it) and the cached link (`build`,
// set up as `setup`); no plan, with `why`, when it cannot be split.
PathAnswer split_build(const LaunchSetup& setup, const toolchain::frontend::BuildRequest& build,
                       Session& session, Unchanged& why);

}  // namespace ob::run
