// clang-scan-deps, LLVM's dependency directives scanner: many dependency
// scans in one process, over a compilation database, instead of one clang -M
// each, whose start (~25 ms of CPU, loading LLVM) is most of a scan's cost.
// Its database entries, its command and its output (remote execution's scan
// batches, exec/remote/scan_batch.hpp); a frontend says which of its scans
// are such an entry (Frontend::batch_scan).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ob::toolchain::scan_deps {

// One scan as a database entry: its arguments, and the depfile the scan
// alone would have written (the caller writes it from the output).
struct Entry {
  std::vector<std::string> argv;
  std::string depfile;
};

// The name of database entry `n` (its "file"), by which the output names it.
std::string entry_name(size_t n);
// clang-scan-deps at `tool` over the database `db`, `threads` at once, its
// output (JSON) written to `out`.
std::vector<std::string> argv(const std::string& tool, const std::string& db, const std::string& out,
                              size_t threads);
// That output: the files each entry's compiles read (absolute, or relative to
// the entry's directory), by entry number; nullopt when it is not such output.
std::optional<std::map<size_t, std::vector<std::string>>> read_output(std::string_view json);

}  // namespace ob::toolchain::scan_deps
