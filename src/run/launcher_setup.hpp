// Launcher mode: a command set up once (launcher_setup.cpp): an MPI wrapper
// unwrapped, the compiler found and recognized, its LLVM installation,
// response and config files read, paths made base-relative; and a parsed
// compile made ready to plan. Every launcher path starts from a LaunchSetup.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher_unchanged.hpp"
#include "offload_build/run/request.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::run {

// `name` (argv[0]) as a path: relative to `cwd` when it has a slash, else found on PATH.
std::optional<fs::path> resolve_program(const std::string& name, const fs::path& cwd);

// What every launcher call starts from: the working directory, the compiler
// (resolved) and the frontend whose driver it is, the LLVM installation it is
// part of, the command line the driver works on, and that with the paths
// under the base directories relative to the working directory.
struct LaunchSetup {
  fs::path cwd;
  fs::path compiler;
  // The registered frontend whose driver the compiler is (frontend::recognize).
  const toolchain::frontend::Frontend* frontend = nullptr;
  // The LLVM installation the compiler is part of (/usr/bin/clang++-22 is
  // /usr/lib/llvm-22/bin/clang): its llvm-offload-binary packages the images.
  std::optional<toolchain::Toolchain> toolchain;
  std::vector<std::string> expanded;
  std::vector<std::string> argv;
  // --base-dir and the --project-dir directories (real paths), and the
  // directory kernel names are relative to (launcher_roots).
  std::vector<fs::path> bases;
  fs::path anchor;
};

// A launcher call's command, set up once (prepare): the prefix taken
// (take_prefix), the command that runs when it is not split, an MPI wrapper
// unwrapped, the compiler set up (launch_setup). No `setup`, with `why`,
// when it runs unchanged.
struct Launch {
  Prefix prefix;
  std::vector<std::string> given;    // what runs unchanged (after the prefix)
  std::vector<std::string> command;  // what is split (an MPI wrapper's compiler command)
  std::optional<LaunchSetup> setup;
  Unchanged why;
};
// `launch.command` (COMPILER ARGS...) prepared as above.
void prepare(Launch& launch, const Request& options);

// An MPI compiler wrapper (mpicxx, mpifort ...) replaced in `command` by the
// command it runs when that compiler is a registered frontend's (clang,
// flang); otherwise the reason it runs unchanged.
std::optional<Unchanged> unwrap(std::vector<std::string>& command, const Request& options);
// `command` set up; nullopt with `why` when it runs unchanged.
std::optional<LaunchSetup> launch_setup(const std::vector<std::string>& command, const Request& options,
                                        Unchanged& why);
}  // namespace ob::run
