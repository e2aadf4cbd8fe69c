#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "offload_build/cli/commands.hpp"

namespace ob::cli {

struct ConfigCli {
  CLI::App* command = nullptr;
  bool json = false;
  bool markdown = false;
  std::vector<std::string> words;  // get KEY | set KEY VALUE | unset KEY
};

void add_config_command(CLI::App& app, ConfigCli& c);
// The exit code: 0; 1 for `get` of an unset setting; 2 for a usage error.
int run_config(const Request& o, const ConfigCli& c, std::ostream& out);

}  // namespace ob::cli
