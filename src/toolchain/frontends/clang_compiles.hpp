// The two shapes of a clang OpenMP compile's passes (frontend::Compile):
// from a manifest's options (clang_openmp.cpp) and from a caller's own clang
// command line in launcher mode (clang_cli_passes.cpp); and the few flags
// both write, which flang's passes (flang.cpp) write too. Private to the
// frontends; the planners see frontend.hpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "offload_build/toolchain/frontends/clang_cli.hpp"
#include "offload_build/toolchain/frontends/frontend.hpp"

namespace ob::toolchain::clang_openmp {

// The one option that makes a device pass compile for `target` alone:
// --offload-arch=ARCH for a GPU, -fopenmp-targets=TRIPLE for the host device.
std::string target_selector(const manifest::Target& target);

// What a device pass for `target` needs to use `tc`'s device runtime
// (Toolchain::device_runtime): its bitcode directory where the driver does
// not look, -nogpulib for an AMD GPU without ROCm's device libraries, and
// -nogpulib where there is none (only ompx_bare kernels build then).
std::vector<std::string> device_runtime_flags(const Toolchain& tc, const manifest::Target& target);

// What makes a host pass embed a package: -Xclang -fembed-offload-object=PACKAGE.
std::vector<std::string> embed_package(const std::string& package);

// What makes a host pass write its parse as unoptimized IR (single parse).
std::vector<std::string> emit_host_ir();

// Whether `arg` only matters while preprocessing (-I -D -U -include -isystem
// ...); `takes_next`: its value is the next argument.
bool is_preprocessor_option(const std::string& arg, bool& takes_next);

// A manifest's source: device passes `clang -fopenmp SELECTOR
// [-nogpulib] --offload-device-only -I.. -D.. flags device_flags -MD -MF DEP
// -c SRC -o OUT`, host passes naming every target triple, the host codegen
// without preprocessor options.
std::unique_ptr<frontend::Compile> manifest_compile(const Toolchain& tc, const manifest::Manifest& m,
                                                    const manifest::SourceFile& src, const fs::path& src_arg);

}  // namespace ob::toolchain::clang_openmp

namespace ob::toolchain::clang_cli {

// A launcher compile: each pass is the caller's command line with its output,
// dependency and target options replaced (see docs/LAUNCHER.md). Where the
// IR records the compilation directory (debug info, tracked source
// locations, records) and the caller named none, every pass names `cwd`.
std::unique_ptr<frontend::Compile> launcher_compile(const CompileRequest& req, const fs::path& cwd,
                                                    const std::string& record);

}  // namespace ob::toolchain::clang_cli
