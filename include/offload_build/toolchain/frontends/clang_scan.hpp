// A compile's dependency scan (remote execution, docs/DISTRIBUTED.md): the
// command that lists every file a clang compile reads, with the compile's own
// flags and target, and compiles nothing. The only code that rewrites a
// compile into a scan, so it lives with the other clang option knowledge.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "offload_build/toolchain/frontends/scan_deps.hpp"

namespace ob::toolchain::clang_cli {

// `argv` (a clang driver compile, `-c`, or a cc1 job, `-cc1 -emit-obj`...)
// changed to preprocess only and write a Make depfile naming every file read,
// system headers included, to `depfile`. nullopt: not a compile it knows.
std::optional<std::vector<std::string>> dependency_scan_argv(const std::vector<std::string>& argv,
                                                             const std::string& depfile);

// The scan as an entry of clang-scan-deps' compilation database
// (scan_deps.hpp), which writes no depfile (the caller writes the entry's);
// nullopt: not one it answers as that scan would (a driver's -M of a
// device-only compile lists system headers clang-scan-deps does not: it
// runs alone).
std::optional<scan_deps::Entry> batch_scan_of(const std::vector<std::string>& scan_argv);

// The first option of `argv` (a driver or cc1 command) whose meaning is this
// machine's (-march=native, -mtune=native, -mcpu=native, --offload-arch=native,
// -target-cpu native), as spelled; nullopt when none.
std::optional<std::string> machine_dependent_option(const std::vector<std::string>& argv);

}  // namespace ob::toolchain::clang_cli
