// Launcher mode: a command run unchanged (launcher_unchanged.cpp), counted
// by kind, named once per build, and a launcher call's part of --report.
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
// one is set and it compiles no device code; its exit code. Counted in the
// cache's counters (unless --no-cache) and, under -v, said once per build
// and reason (a build: the nearest ancestor process that is not a `sh -c`,
// e.g. make or ninja; remembered in the cache directory); reported and
// traced by the session, as every flow.
int pass_through(const std::vector<std::string>& command, const Unchanged& why, const Request& options,
                 const Prefix& prefix);

// --report's part of a launcher call: its command, whether it was split (why
// not, with `why`) and its exit code; the report's manifest "".
void launcher_report_section(nlohmann::json& report, const std::vector<std::string>& command, const Unchanged* why,
                             int exit_code);
}  // namespace ob::run
