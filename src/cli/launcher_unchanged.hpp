// Launcher mode: saying that a compile ran unchanged (launcher_unchanged.cpp):
// counted by kind, named once per build, and a launcher call's --report.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/cli/commands.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"

namespace ob::cli {

// Why a command runs unchanged (its kind: frontend::unchanged::k...).
using Unchanged = toolchain::frontend::Unchanged;

// Count a compile run unchanged in the cache's counters (unless --no-cache)
// and, under -v, say why: once per build and reason, not once per compile
// (a build: the nearest ancestor process that is not a `sh -c`, e.g. make
// or ninja; remembered in the cache directory).
void note_unchanged(const Unchanged& why, const Request& options);
// Whether this build (make's or ninja's run: the nearest ancestor that is not
// a command shell) has not said `code` yet; marks it said, under `cache`.
bool first_in_build(const std::filesystem::path& cache, const std::string& code);
// Whether this build said `code` already (marks nothing).
bool said_in_build(const std::filesystem::path& cache, const std::string& code);
// A file of this build's under `cache` for `code` (what its compiles share:
// remote execution's time budget), its directory made; removed after a day.
std::filesystem::path build_file(const std::filesystem::path& cache, const std::string& code);

// `wrap --report FILE`: the build report of one compile. `report` is
// make_report's JSON for a split compile (its jobs), or null for one run
// unchanged (`why`, the compiler's `exit_code`); the launcher fields are
// added here. A failure to write is a warning.
void write_launcher_report(const Request& options, const std::vector<std::string>& command,
                           nlohmann::json report, const Unchanged* why, int exit_code);

}  // namespace ob::cli
