// `run` (build, then the program) and `verify -- PROGRAM`: the program run
// as run/program.hpp runs it.
#include <fmt/core.h>

#include "offload_build/cli/commands.hpp"
#include "offload_build/process/subprocess.hpp"
#include "offload_build/run/program.hpp"
#include "offload_build/toolchain/frontends/clang_openmp.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/program_identity.hpp"
#include "offload_build/toolchain/toolchain.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

namespace ob::cli {

Result<int> run(const Request& o, const ProgramOptions& r) {
  auto program = build(o);
  if (!program) return program.error();
  ProgramOptions options = r;
  auto m = manifest::load_manifest(manifest_path(o), toolchain::frontend::manifest_options());
  options.rust = m && m->is_rust();
  return run_program(o, options, *program);
}

Result<int> run_program(const Request& o, const ProgramOptions& r, const fs::path& program) {
  process::Command cmd;
  cmd.argv.push_back(program.string());
  cmd.argv.insert(cmd.argv.end(), r.args.begin(), r.args.end());
  return run::run_program(std::move(cmd), o, r.verify,
                     "run --verify: the program ran but no kernel was launched on an offload "
                     "device; its target regions ran on the host. Check that OMP_TARGET_OFFLOAD is "
                     "not DISABLED and that the offload targets (the manifest's \"targets\", "
                     "Cargo.toml's [package.metadata.offload] targets or --target) include one this "
                     "machine can run (\"host\" always can)",
                     r.rust);
}

Result<int> verify(const Request& o, std::vector<std::string> command) {
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty())
    return Error::usage("verify: no program; usage: offload-build verify -- PROGRAM ARGS...");
  const std::string program = command.front();
  process::Command cmd{std::move(command), o.directory == "." ? fs::path() : o.directory, {}};
  return run::run_program(
      std::move(cmd), o, true,
      fmt::format("verify: {} ran but no kernel was launched on an offload device; its target "
                  "regions ran on the host, or it has none. Check that it was compiled with "
                  "-fopenmp and offload targets (e.g. --offload-arch=..., or through "
                  "offload-build as the compiler launcher: docs/LAUNCHER.md) and that "
                  "OMP_TARGET_OFFLOAD is not DISABLED",
                  program));
}

Result<int> runtime_flags(const std::string& compiler, const std::vector<std::string>& targets) {
  const auto path = toolchain::program_path(compiler);
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return Error::usage("runtime-flags: compiler " + compiler + " not found");
  auto tc = toolchain::toolchain_at(real.parent_path().parent_path());
  if (!tc) return Error::usage("runtime-flags: " + compiler + ": " + tc.error().message);
  std::vector<manifest::Target> wanted;
  for (const auto& t : targets) {
    auto target = manifest::resolve_target(t);
    if (!target) return Error::usage("runtime-flags: " + target.error().message);
    wanted.push_back(*target);
  }
  std::cout << nlohmann::json{{"compile", toolchain::clang_openmp::runtime_compile_flags(*tc, wanted)}}.dump() << '\n';
  return exit_code::ok;
}

}  // namespace ob::cli
