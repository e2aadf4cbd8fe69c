#pragma once

#include <CLI/CLI.hpp>

#include "offload_build/cli/commands.hpp"
#include "offload_build/exec/jobserver.hpp"

namespace ob::cli {

void add_global_options(CLI::App& app, GlobalOptions& options);
size_t effective_jobs(const GlobalOptions& options);
// How many driver probes may run at once: -j, or 1 under a make jobserver
// (they run in the slot make started us with; they take no tokens).
size_t probe_jobs(const GlobalOptions& options, const exec::JobserverSetup& jobserver);

}  // namespace ob::cli
