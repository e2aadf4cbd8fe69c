#pragma once

#include <CLI/CLI.hpp>

#include "offload_build/cli/commands.hpp"

namespace ob::cli {

void add_global_options(CLI::App& app, GlobalOptions& options);
size_t effective_jobs(const GlobalOptions& options);

}  // namespace ob::cli
