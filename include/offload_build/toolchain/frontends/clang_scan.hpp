// A compile's dependency scan (remote execution, docs/DISTRIBUTED.md): the
// command that lists every file a clang compile reads, with the compile's own
// flags and target, and compiles nothing. The only code that rewrites a
// compile into a scan, so it lives with the other clang option knowledge.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ob::toolchain::clang_cli {

// `argv` (a clang driver compile, `-c`, or a cc1 job, `-cc1 -emit-obj`...)
// changed to preprocess only and write a Make depfile naming every file read,
// system headers included, to `depfile`. nullopt: not a compile it knows.
std::optional<std::vector<std::string>> dependency_scan_argv(const std::vector<std::string>& argv,
                                                             const std::string& depfile);

// The first option of `argv` (a driver or cc1 command) whose meaning is this
// machine's (-march=native, -mtune=native, -mcpu=native, --offload-arch=native,
// -target-cpu native), as spelled; nullopt when none.
std::optional<std::string> machine_dependent_option(const std::vector<std::string>& argv);

// What "native" means on this machine's CPU (its vendor, family, model and
// feature flags, from /proc/cpuinfo), read once: keyed with a job that says
// -march=native, so a cache shared between machines never serves one CPU's
// code to another.
const std::string& native_cpu();

}  // namespace ob::toolchain::clang_cli
