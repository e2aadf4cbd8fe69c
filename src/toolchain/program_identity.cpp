#include "offload_build/toolchain/program_identity.hpp"

#include "offload_build/config/config.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"
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
  if (auto mode = clang_cli::driver_mode(program); !mode.empty()) id += " driver-mode=" + mode;
  return id;
}

}  // namespace ob::toolchain
