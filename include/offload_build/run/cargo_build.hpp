// The cargo flow (`offload-build cargo build|run|test|check|clippy`): the
// session (cargo metadata, the kernel crates, the targets), then its plan
// (plan/cargo_plan.hpp: a device pass per kernel crate and target, the
// package, the embed, the host pass; keyed by cache/cargo_cache.hpp) run as a
// Session (session.hpp) on the CargoRunner (exec/cargo_runner.hpp). The
// command line is cli's (cli/cargo_args.hpp, cli/cargo_offload.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "offload_build/run/session.hpp"
#include "offload_build/run/request.hpp"

namespace ob::run {

// What a cargo call asked for (the words after `offload-build cargo`).
struct CargoArgs {
  std::string command = "build";     // build, run, test, check, clippy
  bool run = false;                  // run
  bool verify = false;               // run --verify (offload-build's, not given to cargo)
  std::vector<std::string> cargo;    // cargo's arguments, without build|run and --verify
  std::vector<std::string> program;  // after `--`
};

// What a cargo call built: the programs (none under --dry-run); or, when no
// kernel crate is in this build (an optional one left out by the features),
// the exit code of cargo run alone on the command.
struct CargoBuilt {
  std::vector<fs::path> programs;
  std::optional<int> exit_code;
};

// Build the passes of `args` in -C's package, through `session` (made first:
// make's jobserver); ends with the summary line.
Result<CargoBuilt> cargo_build(const Request& options, const CargoArgs& args, Session& session);

// `cargo clean|doc ...`: cargo's own command, run with the toolchain both
// passes use; its exit code.
Result<int> cargo_own(const Request& options, const std::vector<std::string>& args);

}  // namespace ob::run
