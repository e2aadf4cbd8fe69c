// A command to run: an argv vector (never a shell string), a working directory
// and environment changes. `display()` is the re-runnable shell form.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ob::process {

struct Command {
  std::vector<std::string> argv;
  std::filesystem::path cwd;  // empty: the current directory
  // Variables to set (value) or unset (nullopt) in the child's environment.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;

  // argv shell-quoted and joined; prefixed by "VAR=value" for set variables.
  std::string display() const;
};

}  // namespace ob::process
