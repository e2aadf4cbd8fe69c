// The clang OpenMP-offload frontend: the exact argv of each job kind.
// Only this file knows clang's offload flags; the planner asks it for commands.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "offload_build/manifest/manifest.hpp"
#include "offload_build/toolchain/toolchain.hpp"

namespace ob::clang_openmp {

namespace fs = std::filesystem;

struct Image {
  fs::path file;
  Target target;
  // Under offload LTO (-foffload-lto) the driver also records the device
  // compile's target features ("+ptx88") in the image: `feature=` entries.
  std::vector<std::string> features = {};
};

// Whether these compile options turn offload LTO on (-foffload-lto[=K], the
// last of it and -fno-offload-lto wins), as the driver's isUsingOffloadLTO.
bool uses_offload_lto(const std::vector<std::string>& options);

// The one option that makes a device pass compile for `target` alone:
// --offload-arch=ARCH for a GPU, -fopenmp-targets=TRIPLE for the host device.
// Shared with the launcher (clang_cli), whose passes must match these.
std::string target_selector(const Target& target);

// What makes a host pass embed a package: -Xclang -fembed-offload-object=PACKAGE.
std::vector<std::string> embed_package(const fs::path& package);

// Paths passed in are written into argv as given (the planner makes them
// relative to the project directory, where every command runs). `depfile`:
// where the command writes the Make-style list of every file it read.
std::vector<std::string> device_compile(const Toolchain& tc, const Manifest& m,
                                        const SourceFile& src, const fs::path& src_arg,
                                        const Target& target, const fs::path& out,
                                        const fs::path& depfile);

std::vector<std::string> package(const Toolchain& tc, const std::vector<Image>& images,
                                 const fs::path& out);

std::vector<std::string> host_compile(const Toolchain& tc, const Manifest& m,
                                      const SourceFile& src, const fs::path& src_arg,
                                      const fs::path& package, const fs::path& out,
                                      const fs::path& depfile);

// Whether `arg` only matters while preprocessing (-I -D -U -include -isystem
// ...); `takes_next`: its value is the next argument.
bool is_preprocessor_option(const std::string& arg, bool& takes_next);

// The single-parse host-IR step: the host pass's parse of `src`, written as
// unoptimized bitcode (what the one-shot driver feeds its device passes and
// its host codegen).
std::vector<std::string> host_ir(const Toolchain& tc, const Manifest& m, const SourceFile& src,
                                 const fs::path& src_arg, const fs::path& out,
                                 const fs::path& depfile);

// The single-parse host pass: codegen from the TU's host IR (`host_ir`,
// unoptimized bitcode from the host-IR step), embedding `package`. The
// user's preprocessor options (-I -D -U -include ...) are left out: they would
// only be reported unused on an IR input.
std::vector<std::string> host_codegen(const Toolchain& tc, const Manifest& m,
                                      const SourceFile& src, const fs::path& host_ir,
                                      const fs::path& package, const fs::path& out);

std::vector<std::string> link(const Toolchain& tc, const Manifest& m,
                              const std::vector<fs::path>& objects, const fs::path& out,
                              const fs::path& depfile);

}  // namespace ob::clang_openmp
