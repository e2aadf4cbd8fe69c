// `offload-build cargo build|run [CARGO ARGS] [-- PROGRAM ARGS]`: Rust offload
// on a cargo project. The device pass runs per target as `cargo rustc --lib` with
// the device cfg, each in its own target dir; the images are packaged and
// embedded; then `cargo build` links them (and `run` starts the program).
// The entry (cli/cargo_offload.cpp) parses the words; the flow is
// run/cargo_build.hpp.
#pragma once

#include <string>
#include <vector>

#include "offload_build/cli/commands.hpp"

namespace ob::cli {

// `args` starts with "build" or "run"; `before` are the words between
// `offload-build` and `cargo` (where a misplaced offload-build option goes, as
// the error says). Ends with the summary line of its jobs: a device pass per
// kernel crate and target, the package, the embed (flavour test) and the host
// pass. `run --verify` proves offload as `offload-build run --verify` does.
// Returns the exit code to use.
Result<int> cargo(const Request& options, const std::vector<std::string>& args,
                  const std::vector<std::string>& before = {});

}  // namespace ob::cli
