// The commands behind the CLI, callable from tests without parsing argv.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/config/config.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

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
  std::vector<std::string> command_line;    // argv as given (a no-op build's record, cli/noop_build)
};

struct RunOptions {
  bool verify = false;                      // --verify: prove offload from the runtime log
  std::vector<std::string> args;            // after --: the program's arguments
};

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

// The manifest file of -C DIR and --manifest FILE.
fs::path manifest_path(const Request& options);
// The error for a missing manifest: where it was looked for, and how to make one.
Error no_manifest(const fs::path& file);

// Build the project; returns the linked program's path.
Result<fs::path> build(const Request& options);

// Build, then run the program; returns the exit code to use.
Result<int> run(const Request& options, const RunOptions& run_options);
// `verify [--] PROGRAM ARGS...`: run any program as `run --verify` runs the
// manifest's; fails when no kernel ran on an offload device.
Result<int> verify(const Request& options, std::vector<std::string> command);
// `clean`: remove the manifest's build directory (never the cache, never a
// directory outside the project); under --dry-run, say what it would remove.
Result<int> clean(const Request& options);

// Run a built program as `run` does (OMP_TARGET_OFFLOAD=MANDATORY unless set;
// under --verify the offload log's summary, an error when no kernel ran on an
// offload device); the program's exit status is the result. `run` after build,
// `cargo run` after the host pass.
Result<int> run_program(const Request& options, const RunOptions& run_options, const fs::path& program);

}  // namespace ob::cli
