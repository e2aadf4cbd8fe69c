// A compile's dependency scan (remote execution, docs/DISTRIBUTED.md): the
// command that lists every file a clang compile reads, with the compile's own
// flags and target, and compiles nothing. The only code that rewrites a
// compile into a scan, so it lives with the other clang option knowledge.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ob::toolchain::clang_cli {

// `argv` (a clang driver compile, `-c`, or a cc1 job, `-cc1 -emit-obj`...)
// changed to preprocess only and write a Make depfile naming every file read,
// system headers included, to `depfile`. nullopt: not a compile it knows.
std::optional<std::vector<std::string>> dependency_scan_argv(const std::vector<std::string>& argv,
                                                             const std::string& depfile);

// Many scans in one process: clang-scan-deps (LLVM's dependency directives
// scanner) over a compilation database, instead of one clang -M each, whose
// start (~25 ms of CPU, loading LLVM) is most of a scan's cost.
//
// A scan from dependency_scan_argv as an entry of a compilation database
// (clang-scan-deps writes no depfile: the caller writes `depfile`); nullopt:
// not one it answers as that scan would (a driver's -M of a device-only
// compile lists system headers clang-scan-deps does not: it runs alone).
struct BatchScan {
  std::vector<std::string> argv;
  std::string depfile;
};
std::optional<BatchScan> batch_scan_of(const std::vector<std::string>& scan_argv);
// The name of database entry `n` (its "file"), by which the output names it.
std::string batch_entry_name(size_t n);
// clang-scan-deps at `tool` over the database `db`, `threads` at once, its
// output (JSON) written to `out`.
std::vector<std::string> scan_deps_argv(const std::string& tool, const std::string& db, const std::string& out,
                                        size_t threads);
// That output: the files each entry's compiles read (absolute, or relative to
// the entry's directory), by entry number; nullopt when it is not such output.
std::optional<std::map<size_t, std::vector<std::string>>> read_scan_deps(std::string_view json);

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
