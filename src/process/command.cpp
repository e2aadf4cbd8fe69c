#include "offload_build/process/command.hpp"

#include "offload_build/util/strings.hpp"

namespace ob::process {

std::string Command::display() const {
  std::string out;
  for (const auto& [name, value] : env) {
    if (!value) continue;
    out += name + "=" + util::shell_quote(*value) + " ";
  }
  return out + util::shell_join(argv);
}

}  // namespace ob::process
