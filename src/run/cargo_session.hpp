// Private to src/run: what the cargo flow (cargo_build.cpp) learns before
// it plans: cargo metadata's packages, the kernel crates, the programs
// grouped by them, the offload targets (cargo_session.cpp); and cargo's own
// commands, run with the toolchain both passes use.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "offload_build/plan/cargo_plan.hpp"
#include "offload_build/run/cargo_build.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// The session of -C's package for `args`: an error names what to fix.
// `memo`: where cargo's and rustc's answers are remembered.
Result<plan::CargoSession> open_session(const Request& o, const CargoArgs& args, const std::optional<fs::path>& memo);

// No kernel crate is in this build (an optional one left out by the
// features): the program is cargo's alone, built and run as cargo would.
Result<int> without_device_pass(const Request& o, const CargoArgs& parsed, const plan::CargoSession& s);

}  // namespace ob::run
