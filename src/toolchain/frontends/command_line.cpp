// What the launcher asks of a command line besides its parse (command_line.hpp):
// the files a compile's options name, its `native` targets, and whether it
// may run through prefix_command.
#include "offload_build/toolchain/frontends/command_line.hpp"

#include <unistd.h>

#include <algorithm>

#include "offload_build/toolchain/driver_probe.hpp"
#include "offload_build/toolchain/frontends/clang_cli.hpp"

namespace ob::toolchain::frontend {

std::string CompileRequest::output_arg() const {
  if (output) return *output;
  return fs::path(source).filename().replace_extension(".o").string();
}

std::optional<Unchanged> CompileRequest::unusable_files(const fs::path& cwd) const {
  for (const auto& f : keyed_files) {
    const fs::path p = (cwd / f).lexically_normal();
    std::error_code ec;
    if (f.empty() || !fs::is_regular_file(p, ec) || access(p.c_str(), R_OK) != 0)
      return Unchanged{"an option names " + (f.empty() ? std::string("no file") : f) +
                           ", which is not a readable file (the compiler reports it)",
                       unchanged::kPaths, {}};
  }
  for (const auto& f : maybe_files) {
    std::error_code ec;
    if (fs::exists(cwd / f, ec))
      return Unchanged{"an -mllvm option names the file " + f + ", which is not keyed", unchanged::kOption,
                       "-mllvm"};
  }
  return std::nullopt;
}

bool CompileRequest::resolve_natives(const Toolchain& tc, const std::optional<fs::path>& memo) {
  if (native.empty()) return true;
  std::vector<manifest::Target> found;
  for (const auto& arch : system_gpu_archs(tc, memo).value_or(std::vector<std::string>{})) {
    auto t = manifest::resolve_target(arch);
    if (t && t->is_gpu()) found.push_back(*t);
  }
  for (const auto& wanted : native) {
    bool any = false;
    for (const auto& t : found) {
      if (!wanted.empty() && t.triple != wanted) continue;
      any = true;
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
    if (!any) return false;
  }
  return true;
}

bool compiles_no_device_code(const std::vector<std::string>& command, const fs::path& compiler,
                             const fs::path& cwd) {
  if (command.empty()) return false;
  std::error_code ec;
  if (!clang_cli::is_clang(command.front()) && !clang_cli::is_clang(fs::canonical(compiler, ec))) {
    const auto expanded = clang_cli::expand_response_files(command, cwd);
    return expanded && clang_cli::offload_free(*expanded);
  }
  clang_cli::DriverEnvironment env = clang_cli::driver_environment(compiler);
  // clang edits the command line (response files expanded) before it reads
  // the configuration files.
  auto expanded = clang_cli::expand_response_files(command, cwd);
  if (expanded && env.override_options)
    expanded = clang_cli::apply_override_options(*expanded, *env.override_options);
  if (!expanded) return false;
  env.override_options.reset();  // applied
  const auto driven = clang_cli::driver_argv(*expanded, cwd, env);
  return driven && driven->doubt.empty() && clang_cli::offload_free(driven->argv);
}

}  // namespace ob::toolchain::frontend
