// The commands behind the CLI, callable from tests without parsing argv.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/config/config.hpp"
#include "offload_build/run/manifest_build.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli {

namespace fs = std::filesystem;

// What one command line asked for, and the settings every flow resolves the
// same way (run/request.hpp).
using run::Request;
using run::cache_dir_for;
using run::max_size_for;

// How `run` and `cargo run` start the built program.
struct ProgramOptions {
  bool verify = false;                      // --verify: prove offload from the runtime log
  std::vector<std::string> args;            // after --: the program's arguments
  bool rust = false;                        // a Rust offload program: its kernels have no host fallback
};

// The manifest build's entry and its manifest (run/manifest_build.hpp).
using run::manifest_path;
using run::no_manifest;
using run::build;

// Build, then run the program; returns the exit code to use.
Result<int> run(const Request& options, const ProgramOptions& run_options);
// `verify [--] PROGRAM ARGS...`: run any program as `run --verify` runs the
// manifest's; fails when no kernel ran on an offload device.
Result<int> verify(const Request& options, std::vector<std::string> command);

// `runtime-flags --compiler C TARGET...`: {"compile": [...]} on stdout, the
// options C's LLVM needs for TARGET's device runtime
// (clang_openmp::runtime_compile_flags); an error naming a bad target or an
// LLVM offload-build cannot use.
Result<int> runtime_flags(const std::string& compiler, const std::vector<std::string>& targets);
// `clean`: remove the manifest's build directory (never the cache, never a
// directory outside the project); under --dry-run, say what it would remove.
Result<int> clean(const Request& options);

// Run a built program as `run` does (OMP_TARGET_OFFLOAD=MANDATORY unless set;
// under --verify the offload log's summary, an error when no kernel ran on an
// offload device); the program's exit status is the result. `run` after build,
// `cargo run` after the host pass.
Result<int> run_program(const Request& options, const ProgramOptions& run_options, const fs::path& program);

}  // namespace ob::cli
