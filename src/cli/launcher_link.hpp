// Launcher mode's link (launcher_link.cpp): an OpenMP offload link as one
// cached job.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/cli/commands.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/command_line.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::cli {

// Run an OpenMP offload link (CMAKE_<LANG>_LINKER_LAUNCHER) as one cached job:
// device links, wrapper and host link served together. Returns the exit code,
// or sets `pass_reason` and returns -1 when it is not such a link.
int cached_link(const std::vector<std::string>& command, const Request& options,
                std::string& pass_reason);

// That link as a job: `link` (the -o path as the executor writes it, a
// depfile of every file the linker read) producing `program`, reading
// `inputs`, its work files under `work`.
Job offload_link_job(const frontend::LinkRequest& link, std::vector<std::filesystem::path> inputs,
                     const std::filesystem::path& program, const std::filesystem::path& work,
                     const std::filesystem::path& cwd, const Toolchain& tc);

}  // namespace ob::cli
