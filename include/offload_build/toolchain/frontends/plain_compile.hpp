// A compile the launcher caches as one job, as ccache caches it: a -c of one
// C or C++ source to an object that it does not split (no offload, host-only
// OpenMP, GCC, targets it does not model, a clang without
// llvm-offload-binary). Read into command_line.hpp's CompileRequest (the
// source, the output, the caller's depfile, the files its options name);
// src/run/launcher_plain.cpp plans and runs it. docs/LAUNCHER.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/command_line.hpp"

namespace ob::toolchain::frontend {

// Whose option spellings a command line has.
enum class Dialect { Clang, Gcc };

// Whether `program` (a name or a path) names GCC's driver: gcc, g++, cc,
// c++, with a target prefix or a version suffix (x86_64-linux-gnu-g++-12).
bool is_gcc(const fs::path& program);

// `argv` (argv[0] the compiler; for clang the command line its driver works
// on) read as a compile cached as one job, or why it is not cacheable. Clang
// through its option table (clang_cli::parse_plain), GCC through a
// conservative reader: an option it does not know is keyed as written; one
// that writes files named after the output, names files it cannot key or
// asks for no object is refused, as is an @file (not read).
Parsed parse_plain(const std::vector<std::string>& argv, Dialect dialect);

// The job's command line: the caller's arguments in order, -o OUTPUT (added
// when it named none, so that the executor can write it under a temporary
// name), and the dependency options writing `depfile`: as the caller asked
// (-MD or -MMD, its -MT/-MQ targets or the output as target, -MP), else -MD.
std::vector<std::string> plain_compile_argv(const CompileRequest& req, const std::string& depfile);

// ccache's base_dir for any of these command lines: clang's rule
// (clang_cli::relative_to_base), which GCC's paths follow too.
std::vector<std::string> relative_to_base(std::vector<std::string> argv, const fs::path& base, const fs::path& cwd);

}  // namespace ob::toolchain::frontend
