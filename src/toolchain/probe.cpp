#include "offload_build/toolchain/probe.hpp"

#include <unistd.h>

#include <system_error>

namespace ob::probe {

bool is_executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<exec::Captured> run(std::vector<std::string> argv, const std::filesystem::path& cwd,
                                  decltype(Command::env) env) {
  Command cmd{std::move(argv), cwd, std::move(env)};
  auto r = exec::capture(cmd);
  if (!r) return std::nullopt;
  return std::move(r).value();
}

}  // namespace ob::probe
