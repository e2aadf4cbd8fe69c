// Private to src/cli: running cargo and the tools around it for `offload-build cargo`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/cargo.hpp"
#include "offload_build/util/result.hpp"

namespace ob::cli::cargo_run {

namespace fs = std::filesystem;

// What a cargo run printed on stdout: its JSON messages (other lines were passed
// through to our stdout; stderr, with cargo's progress and errors, is the user's).
struct CargoOutput {
  int exit_code = 0;
  std::vector<std::string> messages;
};

// Run cargo (echoed under -v) in `cwd`.
Result<CargoOutput> run_cargo(const cargo::Invocation& inv, const fs::path& cwd);

// Run a tool to completion; a non-zero exit is an error naming `what`.
Result<void> run_tool(const std::vector<std::string>& argv, const fs::path& cwd, const std::string& what);

// The command as --dry-run shows it: env assignments, then argv, shell-quoted.
std::string display(const cargo::Invocation& inv);

// The user's RUSTFLAGS (CARGO_ENCODED_RUSTFLAGS, else RUSTFLAGS split on spaces).
std::vector<std::string> user_rustflags();

}  // namespace ob::cli::cargo_run
