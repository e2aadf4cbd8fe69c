// How the cache and the driver probes recognise a program: by what it is,
// not by how argv[0] spells it. `clang-22` found on PATH, /usr/bin/clang-22
// and /usr/lib/llvm-22/bin/clang-22 are one program; clang and clang++ are
// one binary in two driver modes (clang++ compiles a .c file as C++).
#pragma once

#include <filesystem>
#include <string>

namespace ob::toolchain {

namespace fs = std::filesystem;

// `program` as a spawn finds it: a bare name on PATH (as given when PATH has
// none), a path as given.
fs::path program_path(const std::string& program);

// util::file_identity of program_path (real path, size, mtime) and, for a
// compiler driver, the mode its name selects (frontend::driver_mode).
std::string program_identity(const std::string& program);

// What "native" means on this machine's CPU (its vendor, family, model and
// feature flags, from /proc/cpuinfo), read once: keyed with a job that says
// -march=native, so a cache shared between machines never serves one CPU's
// code to another.
const std::string& native_cpu();

}  // namespace ob::toolchain
