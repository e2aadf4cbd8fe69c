// Masquerade mode, as ccache's /usr/lib/ccache: a directory of symlinks named
// after compilers (clang++, flang-new, gcc-12...) that all point at
// offload-build. Put first on PATH, `clang++ ARGS` (and `which clang++`, a
// one-word $(CXX)) runs offload-build, which launches the next clang++ on
// PATH that is not itself. docs/LAUNCHER.md "Masquerade".
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "offload_build/util/result.hpp"

namespace ob::run {

namespace fs = std::filesystem;

// The compiler offload-build was started as (argv[0]'s file name: clang++,
// x86_64-linux-gnu-gcc-12), or nullopt when it was started as itself.
std::optional<std::string> masquerade_name(const char* argv0);

// The compiler `name` stands for: the first `name` on `path_env` whose file is
// not `self` (offload-build, however linked); nullopt when every one is.
std::optional<fs::path> masqueraded_compiler(const std::string& name, const std::string& path_env,
                                             const fs::path& self);

// Run as `name` with `args` (argv[1...]): the launcher on the real compiler,
// or exit 127 saying that none is on PATH.
int masquerade(const std::string& name, const std::vector<std::string>& args);

// `offload-build masquerade DIR [NAME...]`: DIR created with a symlink to
// this offload-build for each compiler NAME (without names: each clang,
// clang++, flang, flang-new, cc, c++, gcc, g++, versioned or not, found on
// PATH outside DIR). A symlink there already is replaced; any other file is
// an error, and nothing is written. Says what it made on `out`.
Result<int> make_masquerade_dir(const fs::path& dir, const std::vector<std::string>& names, std::ostream& out);

}  // namespace ob::run
