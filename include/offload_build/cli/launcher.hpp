// Launcher mode: `offload-build COMPILER ARGS...` (how CMake calls a
// <LANG>_COMPILER_LAUNCHER) and `offload-build [OPTIONS] wrap -- COMPILER ARGS...`.
// An OpenMP offload compile (-c with offload targets) is split into the same
// device, package and host jobs as a manifest build and served from the same
// cache; anything else runs the compiler unchanged. docs/LAUNCHER.md.
#pragma once

#include <string>
#include <vector>

#include "offload_build/cli/commands.hpp"

namespace ob::cli {

// Whether `offload-build ARG1 ...` is a launcher call: ARG1 is not an option
// or one of `subcommands`, and names a program (a path to an executable, a
// program on PATH, or a compiler-looking name such as clang++-22).
bool is_launcher_call(const std::vector<std::string>& subcommands, int argc, char** argv);

// OFFLOAD_BUILD_VERBOSE, _EXPLAIN, _NO_CACHE, _JOBS (and, through the cache's
// default location, _CACHE_DIR) applied where the command line left a default.
void apply_launcher_environment(GlobalOptions& options);

// Run `command` (COMPILER ARGS...). Returns the exit code: the compiler's own
// when it ran unchanged.
int launch(const std::vector<std::string>& command, const GlobalOptions& options);

// ---- launcher_compile.cpp ----

// Split and run an offload compile. Returns the exit code, or, when the
// command is not one offload-build splits, sets `pass_reason` and returns -1.
int split_compile(const std::vector<std::string>& command, const GlobalOptions& options,
                  std::string& pass_reason);

}  // namespace ob::cli
