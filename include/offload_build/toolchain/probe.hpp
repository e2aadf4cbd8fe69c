// Small helpers for probing installed tools (doctor, rustc flavour detection).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "offload_build/process/command.hpp"
#include "offload_build/process/subprocess.hpp"

namespace ob::toolchain::probe {

bool is_executable(const std::filesystem::path& p);

// Run a short probe with captured output; nullopt when it could not start.
std::optional<process::Captured> run(std::vector<std::string> argv,
                                  const std::filesystem::path& cwd = {},
                                  decltype(process::Command::env) env = {});

// Compilers' answers remembered across processes in `dir` (the cache's
// probes/): one small JSON file per key, named `prefix`-HASH.json, read only
// when it is a file of ours (not through a symlink), written by temp file +
// rename. Only a memo: failing to read or write it is never an error.
std::optional<nlohmann::json> recall(const std::optional<std::filesystem::path>& dir,
                                     const char* prefix, const std::string& key);
void remember(const std::optional<std::filesystem::path>& dir, const char* prefix,
              const std::string& key, const nlohmann::json& answer);

}  // namespace ob::toolchain::probe
