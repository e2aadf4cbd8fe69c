// Launcher mode's compile (launcher_compile.cpp): what every launcher call
// starts from (LaunchSetup, set up once in launcher.cpp), one offload compile
// split and run, and the running and reporting of a launcher plan, which the
// one-step build and the link share.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher_unchanged.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/plan/plan.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::cache {
class WholeCompile;
}

namespace ob::run {

class BuildContext;

// `name` (argv[0]) as a path: relative to `cwd` when it has a slash, else found on PATH (launcher.cpp).
std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd);
// The LLVM installation `compiler` is part of (/usr/bin/clang++-22 is
// /usr/lib/llvm-22/bin/clang).
std::optional<toolchain::Toolchain> toolchain_of(const fs::path& compiler);

// What every launcher call starts from: the working directory, the compiler
// (resolved) and the frontend whose driver it is, the command line the
// driver works on, and that with the paths under the base directories
// relative to the working directory.
struct LaunchSetup {
  fs::path cwd;
  fs::path compiler;
  // The registered frontend whose driver the compiler is (frontend::recognize).
  const toolchain::frontend::Frontend* frontend = nullptr;
  std::vector<std::string> expanded;
  std::vector<std::string> argv;
  // --base-dir and the --project-dir directories (real paths), and the
  // directory kernel names are relative to (launcher_roots).
  std::vector<fs::path> bases;
  fs::path anchor;
};
// Split and run the offload compile `req` (`command` set up as `setup`).
// Returns the exit code, or, when it cannot be split, sets `why` and returns -1.
int split_compile(const LaunchSetup& setup, toolchain::frontend::CompileRequest& req,
                  const std::vector<std::string>& command, const Request& options, Unchanged& why);
// A parsed compile made ready to plan: its native targets found, the output
// (with `check_output`), depfile and record directories there; else `why`.
bool ready_to_split(toolchain::frontend::CompileRequest& req, const LaunchSetup& setup, const toolchain::Toolchain& tc,
                    const std::optional<fs::path>& memo, bool check_output, Unchanged& why);
// A launcher's cache (local, and remotes whose errors are warnings), opened
// once for the whole call; not under --dry-run (which only reads the probe
// memo: BuildContext::probe_memo()).
void open_launcher_cache(BuildContext& context);
// Kernel names from each file's place (relative to the base directory, if
// any) and the project's namespace (--kernel-namespace).
void use_stable_kernel_names(plan::Plan& plan, const LaunchSetup& setup, const std::optional<fs::path>& memo,
                             const Request& options);
// Runs a launcher plan with the cache and the jobserver, then writes the
// --report of `command` (under --dry-run, prints the plan's script and runs
// nothing); nullopt when a job failed (the caller then runs the compiler
// unchanged, which prints exactly its own diagnostics). With `whole`, the
// compile's whole entry is stored after it succeeded.
std::optional<int> run_and_report(const plan::Plan& plan, BuildContext& context,
                                  const std::vector<std::string>& command, const std::string& project,
                                  cache::WholeCompile* whole = nullptr);

}  // namespace ob::run
