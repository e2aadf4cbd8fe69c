// The command line's settings into the configuration of this process, and
// the configuration in force back into the options the stages read
// (config/config.hpp: one table, one precedence).
#pragma once

#include "offload_build/cli/commands.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

// Load the config files and the environment, add what `o` was given on the
// command line, install it as config::current() and fill `o` from it.
// An error names a bad config file line or environment variable.
Result<void> resolve_settings(GlobalOptions& o);

}  // namespace ob::cli
