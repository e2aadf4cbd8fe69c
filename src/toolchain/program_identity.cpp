#include "offload_build/toolchain/program_identity.hpp"

#include <fstream>
#include <string_view>

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/toolchain.hpp"
#include "offload_build/util/file_identity.hpp"

namespace ob::toolchain {

fs::path program_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = config::env_or_null("PATH");
  return find_in_path(program, path ? path : "").value_or(fs::path(program));
}

std::string program_identity(const std::string& program) {
  std::string id = util::file_identity(program_path(program));
  if (auto mode = frontend::driver_mode(program); !mode.empty()) id += " driver-mode=" + mode;
  return id;
}

const std::string& native_cpu() {
  static const std::string cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string out, line;
    while (std::getline(in, line)) {
      if (line.empty()) break;  // the first processor's block
      const std::string_view name = std::string_view(line).substr(0, line.find(':'));
      for (std::string_view field : {"vendor_id", "cpu family", "model", "model name", "flags", "CPU implementer",
                                     "CPU architecture", "CPU variant", "CPU part", "Features", "isa", "cpu"})
        if (name.substr(0, name.find_last_not_of(" \t") + 1) == field) out += line + "\n";
    }
    return out.empty() ? std::string("unknown cpu") : out;
  }();
  return cpu;
}

}  // namespace ob::toolchain
