#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "offload_build/cli/commands.hpp"

namespace ob::cli {

struct CacheCli {
  CLI::App* command = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* clear = nullptr;
  CLI::App* prune = nullptr;
  CLI::App* verify = nullptr;
  bool json = false;
  bool zero = false;  // stats --zero
  std::optional<std::string> max_size;
};

void add_cache_commands(CLI::App& app, CacheCli& cache);
Result<int> run_cache_command(const Request& options, const CacheCli& cache);
// `doctor`'s remote storage section: each configured remote (--remote-storage,
// $OFFLOAD_BUILD_REMOTE_STORAGE, the manifest in -C) read once, and what came back.
void doctor_remotes(const Request& options, std::ostream& out);

}  // namespace ob::cli
