// Launcher mode: a command run unchanged (launcher_unchanged.cpp), counted
// by kind, named once per build, and a launcher call's --report.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/run/launcher_prefix.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"

namespace ob::run {

// Why a command runs unchanged (its kind: frontend::unchanged::k...).
using Unchanged = toolchain::frontend::Unchanged;

// `command` run unchanged (`why`), through `prefix` (prefix_command) when
// one is set and it compiles no device code; its exit code.
int pass_through(const std::vector<std::string>& command, const Unchanged& why, const Request& options,
                 const Prefix& prefix);

// Count a compile run unchanged in the cache's counters (unless --no-cache)
// and, under -v, say why: once per build and reason, not once per compile
// (a build: the nearest ancestor process that is not a `sh -c`, e.g. make
// or ninja; remembered in the cache directory).
void note_unchanged(const Unchanged& why, const Request& options);

// --report's part of a launcher call: its command, whether it was split (why
// not, with `why`) and its exit code; the report's manifest "".
void launcher_report_section(nlohmann::json& report, const std::vector<std::string>& command, const Unchanged* why,
                             int exit_code);
// `wrap --report FILE` of a compile run unchanged (`why`, the compiler's
// `exit_code`): a report without jobs. A failure to write is a warning.
void write_launcher_report(const Request& options, const std::vector<std::string>& command, const Unchanged& why,
                           int exit_code);

}  // namespace ob::run
