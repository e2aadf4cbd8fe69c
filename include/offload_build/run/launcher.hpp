// Launcher mode: `offload-build COMPILER ARGS...` (how CMake calls a
// <LANG>_COMPILER_LAUNCHER) and `offload-build [OPTIONS] wrap -- COMPILER ARGS...`.
// An OpenMP offload compile (-c with offload targets) is split into the same
// device, package and host jobs as a manifest build and served from the same
// cache; anything else runs the compiler unchanged. docs/LAUNCHER.md.
// The stages of a launcher call live in src/run/launcher_*.cpp, each with
// its own header there.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "offload_build/run/request.hpp"

namespace ob::run {

// Whether `offload-build [OPTIONS] WORD ...` is a launcher call: WORD is not an option
// nor one of `subcommands`, and names a program (a path to an executable, a
// program on PATH, or a compiler-looking name such as clang++-22).
bool is_launcher_call(const std::vector<std::string>& subcommands, const std::string& word);

// A registered frontend's driver (clang*, flang*), gcc, g++, cc, c++ (with a
// target prefix or version suffix).
bool looks_like_compiler(const std::string& name);

// Run `command` (COMPILER ARGS...). Returns the exit code: the compiler's own
// when it ran unchanged.
int launch(const std::vector<std::string>& command, const Request& options);

}  // namespace ob::run
