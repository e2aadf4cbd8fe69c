// What one command line asked for (Request), made by the CLI and read by
// every flow, and the settings every flow resolves the same way.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/config/config.hpp"
#include "offload_build/process/jobserver.hpp"
#include "offload_build/util/result.hpp"

namespace ob::run {

namespace fs = std::filesystem;

// What one command line asked for: the configuration in force (every
// setting, the command line's options for them included: generated from the
// settings table, cli/options.cpp) and the options that are no settings,
// each consumed by one stage.
struct Request {
  config::Config config;                    // the settings in force (config/config.hpp)
  fs::path directory = ".";                // -C: project directory (manifest stage)
  std::optional<fs::path> manifest;         // --manifest, relative to -C (manifest stage)
  std::vector<std::string> targets;         // --target: override manifest targets (manifest stage)
  bool dry_run = false;                     // --dry-run: print commands, run nothing (executor)
  std::vector<fs::path> project_dirs;       // --project-dir, repeatable (launcher: keys, kernel names)
  bool compdb = false;                      // build --compdb: write compile_commands.json (plan)
  std::optional<fs::path> report;           // --report FILE: JSON account of the build (report)
  std::optional<fs::path> timings;          // --timings[=FILE]: HTML picture; empty: default place (report)
  std::vector<std::string> command_line;    // argv as given (a no-op build's record, run/noop_build)
};

// The config files and the environment added below the command line's
// settings in `options.config`: the configuration in force for the command.
// An error names a bad config file line or environment variable.
Result<void> resolve_settings(Request& options);

// The cache directory in force: --cache-dir, $OFFLOAD_BUILD_CACHE_DIR, the
// manifest's "cache_dir" (when `manifest_cache_dir` is set), a config file,
// else the default location (config/config.hpp: one precedence).
fs::path cache_dir_for(const config::Config& config,
                       const std::optional<fs::path>& manifest_cache_dir);
// The size the local cache is kept under: max_size (environment, the
// manifest's "cache_max_size", a config file, else the table's default).
uint64_t max_size_for(const config::Config& config, const std::optional<uint64_t>& manifest_max_size);
// base_dir in force (--base-dir, $OFFLOAD_BUILD_BASE_DIR, the manifest's
// "base_dir", a config file), as a real path; empty when none is set (or it
// does not exist).
fs::path base_dir_for(const config::Config& config, const std::optional<fs::path>& manifest_base_dir);

// The jobs setting, else the number of CPUs.
size_t effective_jobs(const config::Config& config);
// How many driver probes may run at once: -j, or 1 under a make jobserver
// (they run in the slot make started us with; they take no tokens).
size_t probe_jobs(const config::Config& config, const process::JobserverSetup& jobserver);

// Whether this build (make's or ninja's run: the nearest ancestor that is not
// a command shell) has not said `code` yet; marks it said, under `cache`
// (<cache>/launcher-notes/, markers removed after a day).
bool first_in_build(const fs::path& cache, const std::string& code);
// Whether this build said `code` already (marks nothing).
bool said_in_build(const fs::path& cache, const std::string& code);
// `act` run once in this build for `code` (the concurrent compiles of a make
// -j run wait for the first, under an flock): true when it passed now or
// earlier in this build (marked said then), false when it failed (not marked:
// the next asks again).
bool once_in_build(const fs::path& cache, const std::string& code, const std::function<bool()>& act);
// A file of this build's under `cache` for `code` (what its compiles share:
// remote execution's time budget), its directory made; removed after a day.
fs::path build_file(const fs::path& cache, const std::string& code);

}  // namespace ob::run
