// Launcher mode: `offload-build COMPILER ARGS...` (how CMake calls a
// <LANG>_COMPILER_LAUNCHER) and `offload-build [OPTIONS] wrap -- COMPILER ARGS...`.
// An OpenMP offload compile (-c with offload targets) is split into the same
// device, package and host jobs as a manifest build and served from the same
// cache; anything else runs the compiler unchanged. docs/LAUNCHER.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// Why a command runs unchanged: `code`, its kind, is what `cache stats`
// counts (clang_cli::unchanged::k...); `reason` says more.
struct Unchanged {
  std::string reason;
  std::string code;
};

// ---- launcher_compile.cpp ----

// Split and run an offload compile. Returns the exit code, or, when the
// command is not one offload-build splits, sets `why` and returns -1.
int split_compile(const std::vector<std::string>& command, const GlobalOptions& options,
                  Unchanged& why);

// ---- launcher_unchanged.cpp ----

// Count a compile run unchanged in the cache's counters (unless --no-cache)
// and, under -v, say why: once per build and reason, not once per compile
// (a build: the nearest ancestor process that is not a `sh -c`, e.g. make
// or ninja; remembered in the cache directory).
void note_unchanged(const Unchanged& why, const GlobalOptions& options);

// `wrap --report FILE`: the build report of one compile. `report` is
// make_report's JSON for a split compile (its jobs), or null for one run
// unchanged (`why`, the compiler's `exit_code`); the launcher fields are
// added here. A failure to write is a warning.
void write_launcher_report(const GlobalOptions& options, const std::vector<std::string>& command,
                           nlohmann::json report, const Unchanged* why, int exit_code);

}  // namespace ob::cli
