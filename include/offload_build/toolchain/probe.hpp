// Small helpers for probing installed tools (doctor, rustc flavour detection).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "offload_build/exec/command.hpp"
#include "offload_build/exec/subprocess.hpp"

namespace ob::probe {

bool is_executable(const std::filesystem::path& p);

// Run a short probe with captured output; nullopt when it could not start.
std::optional<exec::Captured> run(std::vector<std::string> argv,
                                  const std::filesystem::path& cwd = {},
                                  decltype(Command::env) env = {});

}  // namespace ob::probe
