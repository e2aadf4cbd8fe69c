// The commands behind the CLI, callable from tests without parsing argv.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::cli {

namespace fs = std::filesystem;

// Options shared by every command. Each is consumed by exactly one stage:
// see add_global_options in src/cli/options.cpp, the one option table.
struct GlobalOptions {
  fs::path directory = ".";                // -C: project directory (manifest stage)
  std::optional<fs::path> manifest;         // --manifest, relative to -C (manifest stage)
  size_t jobs = 0;                          // -j: 0 = number of CPUs (executor)
  std::vector<std::string> targets;         // --target: override manifest targets (manifest stage)
  bool dry_run = false;                     // --dry-run: print commands, run nothing (executor)
  bool verbose = false;                     // -v: echo each command (subprocess)
  std::optional<fs::path> cache_dir;        // --cache-dir (cache)
  std::optional<fs::path> base_dir;         // --base-dir (cache keys, kernel names)
  std::vector<fs::path> project_dirs;       // --project-dir, repeatable (launcher: keys, kernel names)
  std::optional<std::string> kernel_namespace;  // --kernel-namespace (launcher's kernel names)
  bool no_cache = false;                    // --no-cache: neither read nor write (cache)
  std::vector<std::string> remote_storage;  // --remote-storage URL, repeatable (cache)
  bool explain = false;                     // --explain: why each job hit or missed (cache)
  bool compdb = false;                      // build --compdb: write compile_commands.json (plan)
  bool two_parse = false;                   // --two-parse: keep the driver's device passes (plan)
  std::string prefix_command;               // --prefix-command: distcc/icecc for compiles without offload (launcher)
  std::string remote_execution;             // --remote-execution URL: a REAPI engine for compile jobs (executor)
  bool quiet = false;                       // -q: no progress, no summary; errors only (report)
  std::string color = "auto";               // --color auto|always|never (report)
  std::optional<fs::path> report;           // --report FILE: JSON account of the build (report)
  std::optional<fs::path> timings;          // --timings[=FILE]: HTML picture; empty: default place (report)
  std::optional<fs::path> trace;            // --trace FILE: Chrome trace-event JSON (report)
  std::vector<std::string> command_line;    // argv as given (a no-op build's record, cli/noop_build)
};

struct RunOptions {
  bool verify = false;                      // --verify: prove offload from the runtime log
  std::vector<std::string> args;            // after --: the program's arguments
};

// The cache directory in force: --cache-dir, $OFFLOAD_BUILD_CACHE_DIR, the
// manifest's "cache_dir" (when `manifest_cache_dir` is set), a config file,
// else the default location (config/config.hpp: one precedence).
fs::path cache_dir_for(const GlobalOptions& options,
                       const std::optional<fs::path>& manifest_cache_dir);
// The size the local cache is kept under: max_size (config, environment,
// else the manifest's "cache_max_size", else 5G).
uint64_t max_size_for(const std::optional<uint64_t>& manifest_max_size);
// base_dir in force (--base-dir, $OFFLOAD_BUILD_BASE_DIR, the manifest's
// "base_dir", a config file), as a real path; empty when none is set (or it
// does not exist).
fs::path base_dir_for(const GlobalOptions& options, const std::optional<fs::path>& manifest_base_dir);

// The manifest file of -C DIR and --manifest FILE.
fs::path manifest_path(const GlobalOptions& options);
// The error for a missing manifest: where it was looked for, and how to make one.
Error no_manifest(const fs::path& file);

// Build the project; returns the linked program's path.
Result<fs::path> build(const GlobalOptions& options);

// Build, then run the program; returns the exit code to use.
Result<int> run(const GlobalOptions& options, const RunOptions& run_options);
// `verify [--] PROGRAM ARGS...`: run any program as `run --verify` runs the
// manifest's; fails when no kernel ran on an offload device.
Result<int> verify(const GlobalOptions& options, std::vector<std::string> command);
// `clean`: remove the manifest's build directory (never the cache, never a
// directory outside the project); under --dry-run, say what it would remove.
Result<int> clean(const GlobalOptions& options);

// Run a built program as `run` does (OMP_TARGET_OFFLOAD=MANDATORY unless set;
// under --verify the offload log's summary, an error when no kernel ran on an
// offload device); the program's exit status is the result. `run` after build,
// `cargo run` after the host pass.
Result<int> run_program(const GlobalOptions& options, const RunOptions& run_options, const fs::path& program);

}  // namespace ob::cli
